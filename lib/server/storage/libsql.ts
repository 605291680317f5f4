/**
 * `caddy.storage.libsql`: the storage contract on a libSQL database, so that several
 * Gatehouse instances share certificates, keys, the CA and locks through a database they
 * already run (a local file for instances on one machine, a remote libSQL/Turso server across
 * machines).
 *
 * Config (JSON):
 * - `url` (required): `file:/var/lib/gatehouse/storage.db`, `libsql://db.example.com`,
 *   `https://…` or `wss://…`.
 * - `auth_token`: token of a remote server; `{env.NAME}` reads it from the environment.
 *   Never logged.
 * - `table`: name of the key/value table (default `gatehouse_storage`); locks live in
 *   `<table>_locks`. Both are created when missing.
 *
 * A `file:` database is private to the server's user whatever the umask: the file and the
 * `-wal`/`-shm` files SQLite makes beside it are 0600 (see `private_files.ts`); a missing
 * directory is made 0700 (each level), as `file_system` makes its own. A directory that was
 * there keeps its mode (it is the operator's); when group or others may read or write it, the
 * storage warns once as it is provisioned, naming the directory and its mode.
 *
 * Locks are leases: the holder refreshes its row every 5 s; a row not refreshed for 10 s
 * (database clock) is stale and the next `lock`/`tryLock` takes it over, so a holder killed
 * with SIGKILL blocks the others for at most 10 s.
 *
 * @module
 */
import type { Client, ResultSet } from "@libsql/client";
import type { ModuleDefinition } from "../module/mod.ts";
import type { ModuleInstance } from "../module/instance.ts";
import { Decoder } from "../config/decode.ts";
import { ConfigError } from "../config/error.ts";
import {
  isNotFound,
  type KeyInfo,
  LOCK_POLL_MS,
  LOCK_REFRESH_MS,
  normalizeKey,
  sleep,
  STALE_LOCK_MS,
  type Storage,
  StorageNotFoundError,
  trackLock,
  untrackLock,
} from "../module/storage.ts";
import { preparePrivateLibsqlFile, tightenLibsqlSideFiles } from "./private_files.ts";

/** Options of a libSQL storage. */
export interface LibsqlStorageOptions {
  /** Database URL (`file:`, `libsql://`, `https://`, `wss://`). */
  url: string;
  /** Auth token for a remote server. */
  authToken?: string;
  /** Key/value table name (default `gatehouse_storage`). */
  table?: string;
  /**
   * Told of a `file:` database's directory that was already there and that group or others
   * may read or write (its mode is left as it is).
   */
  onSharedDir?: (dir: string, mode: number) => void;
}

/** The database clock in milliseconds, as SQL. */
/** How long a statement on a `file:` database waits for another process's write lock. */
const BUSY_TIMEOUT_MS = 10_000;
const NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

function describe(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`; // no user info, no query (tokens)
  } catch {
    return url.split("?")[0];
  }
}

class LibsqlStorage implements Storage, ModuleInstance {
  readonly #owner = `${Deno.pid}-${crypto.randomUUID()}`;
  readonly #timers = new Map<string, ReturnType<typeof setInterval>>();
  readonly #kv: string;
  readonly #locks: string;
  #closed = false;

  constructor(readonly client: Client, readonly url: string, table: string) {
    this.#kv = `"${table}"`;
    this.#locks = `"${table}_locks"`;
  }

  async init(local: boolean): Promise<void> {
    if (local) {
      await this.client.execute("PRAGMA journal_mode = WAL").catch(() => {});
    }
    await this.client.batch([
      `CREATE TABLE IF NOT EXISTS ${this.#kv} (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL, modified INTEGER NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS ${this.#locks} (name TEXT PRIMARY KEY NOT NULL, owner TEXT NOT NULL, updated INTEGER NOT NULL)`,
    ], "write");
  }

  #under(base: string): { sql: string; args: string[] } {
    // Every key below `base/`: '0' is the character after '/'.
    return { sql: "key > ? AND key < ?", args: [`${base}/`, `${base}0`] };
  }

  async load(key: string): Promise<Uint8Array> {
    const k = normalizeKey(key);
    const rs = await this.client.execute({
      sql: `SELECT value FROM ${this.#kv} WHERE key = ?`,
      args: [k],
    });
    if (!rs.rows.length) throw new StorageNotFoundError(key);
    const v: unknown = rs.rows[0][0];
    if (v instanceof ArrayBuffer) return new Uint8Array(v);
    if (v instanceof Uint8Array) return v;
    return new TextEncoder().encode(String(v));
  }

  async store(key: string, value: Uint8Array): Promise<void> {
    const k = normalizeKey(key);
    if (!k) throw new StorageNotFoundError(key);
    await this.client.execute({
      sql: `INSERT INTO ${this.#kv} (key, value, modified) VALUES (?, ?, ${NOW_MS})
            ON CONFLICT(key) DO UPDATE SET value = excluded.value, modified = excluded.modified`,
      args: [k, value],
    });
  }

  async delete(key: string): Promise<void> {
    const k = normalizeKey(key);
    const u = this.#under(k);
    const rs = k
      ? await this.client.execute({
        sql: `DELETE FROM ${this.#kv} WHERE key = ? OR (${u.sql})`,
        args: [k, ...u.args],
      })
      : await this.client.execute(`DELETE FROM ${this.#kv}`);
    if (rs.rowsAffected === 0) throw new StorageNotFoundError(key);
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.stat(key);
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  async stat(key: string): Promise<KeyInfo> {
    const k = normalizeKey(key);
    let rs = await this.client.execute({
      sql: `SELECT length(value), modified FROM ${this.#kv} WHERE key = ?`,
      args: [k],
    });
    if (rs.rows.length) {
      return {
        key: k,
        size: Number(rs.rows[0][0]),
        modified: new Date(Number(rs.rows[0][1])),
        isTerminal: true,
      };
    }
    const u = this.#under(k);
    rs = k
      ? await this.client.execute({
        sql: `SELECT count(*), max(modified) FROM ${this.#kv} WHERE ${u.sql}`,
        args: u.args,
      })
      : await this.client.execute(`SELECT count(*), max(modified) FROM ${this.#kv}`);
    if (!Number(rs.rows[0][0])) throw new StorageNotFoundError(key);
    return { key: k, size: 0, modified: new Date(Number(rs.rows[0][1])), isTerminal: false };
  }

  async list(prefix: string, recursive: boolean): Promise<string[]> {
    const base = normalizeKey(prefix);
    const u = this.#under(base);
    const rs: ResultSet = base
      ? await this.client.execute({
        sql: `SELECT key FROM ${this.#kv} WHERE ${u.sql}`,
        args: u.args,
      })
      : await this.client.execute(`SELECT key FROM ${this.#kv}`);
    if (!rs.rows.length) throw new StorageNotFoundError(prefix);
    const start = base ? base.length + 1 : 0;
    const out = new Set<string>();
    for (const row of rs.rows) {
      const parts = String(row[0]).slice(start).split("/");
      if (!recursive) {
        out.add((base ? `${base}/` : "") + parts[0]);
        continue;
      }
      for (let i = 1; i <= parts.length; i++) {
        out.add((base ? `${base}/` : "") + parts.slice(0, i).join("/"));
      }
    }
    return [...out].sort();
  }

  async tryLock(name: string): Promise<boolean> {
    const rs = await this.client.execute({
      sql: `INSERT INTO ${this.#locks} (name, owner, updated) VALUES (?, ?, ${NOW_MS})
            ON CONFLICT(name) DO UPDATE SET owner = excluded.owner, updated = excluded.updated
            WHERE ${this.#locks}.updated < ${NOW_MS} - ?`,
      args: [name, this.#owner, STALE_LOCK_MS],
    });
    if (rs.rowsAffected !== 1) return false;
    const timer = setInterval(() => {
      this.client.execute({
        sql: `UPDATE ${this.#locks} SET updated = ${NOW_MS} WHERE name = ? AND owner = ?`,
        args: [name, this.#owner],
      }).catch(() => {});
    }, LOCK_REFRESH_MS);
    Deno.unrefTimer(timer as unknown as number);
    this.#timers.set(name, timer);
    trackLock(this, `${this.#owner}|${name}`, () => this.unlock(name));
    return true;
  }

  async lock(name: string, signal?: AbortSignal): Promise<void> {
    while (!(await this.tryLock(name))) await sleep(LOCK_POLL_MS, signal);
  }

  async unlock(name: string): Promise<void> {
    const timer = this.#timers.get(name);
    if (timer !== undefined) clearInterval(timer);
    this.#timers.delete(name);
    untrackLock(`${this.#owner}|${name}`);
    if (this.#closed) return;
    await this.client.execute({
      sql: `DELETE FROM ${this.#locks} WHERE name = ? AND owner = ?`,
      args: [name, this.#owner],
    });
  }

  toString(): string {
    return `LibsqlStorage:${describe(this.url)}`;
  }

  async cleanup(): Promise<void> {
    for (const name of [...this.#timers.keys()]) await this.unlock(name).catch(() => {});
    this.#closed = true;
    this.client.close();
  }
}

/**
 * Opens a libSQL storage (creating its tables when missing).
 *
 * @example
 * ```ts
 * import { openLibsqlStorage } from "./libsql.ts";
 * const dir = await Deno.makeTempDir();
 * const s = await openLibsqlStorage({ url: `file:${dir}/storage.db` });
 * await s.store("a/b", new TextEncoder().encode("x"));
 * await s.cleanup?.();
 * ```
 */
export async function openLibsqlStorage(
  o: LibsqlStorageOptions,
): Promise<Storage & ModuleInstance> {
  const table = o.table ?? "gatehouse_storage";
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) {
    throw new ConfigError(
      "invalid_config",
      `libsql storage: table must be a plain SQL name, got ${JSON.stringify(table)}`,
      { path: "libsql storage.table" },
    );
  }
  const { createClient } = await import("@libsql/client");
  try {
    // the local CA's root key and every certificate key live here: 0600 in 0700 (a directory
    // made here; one that was there is the operator's and keeps its mode)
    await preparePrivateLibsqlFile(o.url, { onSharedDir: o.onSharedDir });
  } catch (e) {
    throw new Error(`libsql storage: preparing ${describe(o.url)}: ${(e as Error).message}`);
  }
  let client: Client;
  try {
    // The busy timeout is a client option: the client pools connections, and a PRAGMA
    // reaches only the one connection it ran on (the others failed at once with SQLITE_BUSY
    // while another process held the write lock).
    client = createClient({
      url: o.url,
      authToken: o.authToken,
      intMode: "number",
      timeout: BUSY_TIMEOUT_MS,
    });
  } catch (e) {
    throw new Error(`libsql storage: opening ${describe(o.url)}: ${(e as Error).message}`);
  }
  const s = new LibsqlStorage(client, o.url, table);
  try {
    await s.init(o.url.startsWith("file:"));
    await tightenLibsqlSideFiles(o.url);
  } catch (e) {
    client.close();
    throw new Error(
      `libsql storage: preparing ${describe(o.url)} (table ${table}): ${(e as Error).message}`,
    );
  }
  return s;
}

function fromEnv(value: string, field: string): string {
  const m = /^\{env\.([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(value);
  if (!m) return value;
  const v = Deno.env.get(m[1]);
  if (v === undefined) {
    throw new ConfigError(
      "invalid_config",
      `libsql storage: ${field}: environment variable ${m[1]} is not set`,
      { path: `libsql storage.${field}` },
    );
  }
  return v;
}

/**
 * Registry entry of `caddy.storage.libsql`.
 *
 * @example
 * ```ts
 * import { libsqlStorageModule } from "./libsql.ts";
 * libsqlStorageModule.id; // "caddy.storage.libsql"
 * ```
 */
export const libsqlStorageModule: ModuleDefinition<Storage & ModuleInstance> = {
  id: "caddy.storage.libsql",
  create: (c, ctx) => {
    const d: Decoder = new Decoder(c, "libsql storage");
    // the field audit lists these fields itself (a storage decodes its own config)
    for (const k of Object.keys(c)) {
      if (!["url", "auth_token", "table"].includes(k)) {
        d.fail(`unknown field "${k}"`, "unknown_field");
      }
    }
    if (typeof c.url !== "string" || c.url === "") {
      d.fail(
        'url is required (e.g. "file:/var/lib/gatehouse/storage.db" or "libsql://db.example.com")',
      );
    }
    if (c.auth_token !== undefined && typeof c.auth_token !== "string") {
      d.fail("auth_token must be a string");
    }
    if (c.table !== undefined && typeof c.table !== "string") d.fail("table must be a string");
    return openLibsqlStorage({
      url: fromEnv(c.url, "url"),
      authToken: c.auth_token === undefined ? undefined : fromEnv(c.auth_token, "auth_token"),
      table: c.table as string | undefined,
      onSharedDir: (dir, mode) => {
        const octal = mode.toString(8).padStart(4, "0");
        ctx.logger("caddy.storage.libsql").warn(
          "the storage database's directory may be read or written by group or others (chmod 700 it)",
          { path: dir, mode: octal },
        );
      },
    });
  },
};
