/**
 * A D1-shaped adapter over `@libsql/client`: an embedded file (`file:path`), `:memory:`, or a
 * remote libSQL server (`libsql://` or `https://` with an auth token).
 *
 * `@libsql/client` is loaded by the first statement, not when this module loads: the flows of
 * `./d1` run on a Cloudflare D1 binding without it, and the npm mirror lists it as an optional
 * peer dependency that only `openLibsql` users install.
 *
 * @module
 */
import type { Client, InArgs, InStatement, ResultSet } from "@libsql/client";
import type { D1Database, D1PreparedStatement, D1Result } from "./types.ts";

/** Where the libSQL database lives. */
export interface LibsqlOptions {
  /** `file:path/to.db`, `:memory:`, `libsql://host` or `https://host`. */
  url: string;
  /** Auth token for a remote server (never logged). */
  authToken?: string;
  /**
   * How long a statement on a `file:` database waits for another process's write lock
   * before failing with `SQLITE_BUSY`, in milliseconds (every connection of the client's pool
   * gets it). Default 5000.
   */
  busyTimeoutMs?: number;
}

/** A D1-shaped database backed by libSQL, with `close()` to release it. */
export interface LibsqlDatabase extends D1Database {
  /** Closes the connection. */
  close(): void;
}

type Value = string | number | bigint | null | ArrayBuffer | Uint8Array | boolean;

function toArg(v: unknown): Value {
  if (v === undefined) {
    throw new TypeError("D1_TYPE_ERROR: undefined is not a supported bind value");
  }
  if (
    v === null || typeof v === "string" || typeof v === "number" || typeof v === "bigint" ||
    typeof v === "boolean" || v instanceof ArrayBuffer || v instanceof Uint8Array
  ) {
    return v;
  }
  throw new TypeError(`D1_TYPE_ERROR: type '${typeof v}' is not a supported bind value`);
}

function toResult<T>(rs: ResultSet): D1Result<T> {
  const results = rs.rows.map((row) => {
    const o: Record<string, unknown> = {};
    rs.columns.forEach((c, i) => {
      const v = row[i];
      o[c] = typeof v === "bigint" ? Number(v) : v;
    });
    return o as T;
  });
  return {
    results,
    success: true,
    meta: {
      changes: rs.rowsAffected,
      last_row_id: rs.lastInsertRowid === undefined ? undefined : Number(rs.lastInsertRowid),
    },
  };
}

/** The client of one database, created when first asked for. */
type ClientOf = () => Promise<Client>;

class LibsqlStatement implements D1PreparedStatement {
  constructor(readonly client: ClientOf, readonly sql: string, readonly args: InArgs = []) {}

  bind(...values: unknown[]): D1PreparedStatement {
    return new LibsqlStatement(this.client, this.sql, values.map(toArg));
  }

  toStatement(): InStatement {
    return { sql: this.sql, args: this.args };
  }

  async first<T = Record<string, unknown>>(): Promise<T | null> {
    const r = toResult<T>(await (await this.client()).execute(this.toStatement()));
    return r.results[0] ?? null;
  }

  async all<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return toResult<T>(await (await this.client()).execute(this.toStatement()));
  }

  run<T = Record<string, unknown>>(): Promise<D1Result<T>> {
    return this.all<T>();
  }
}

/**
 * Opens a libSQL database and returns it with the D1 interface the flows take.
 *
 * @example
 * ```ts
 * import { applySchema, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql({ url: "file:.data/site.db" });
 * await applySchema(db);
 * db.close();
 * ```
 */
export function openLibsql(options: LibsqlOptions | string): LibsqlDatabase {
  const opts = typeof options === "string" ? { url: options } : options;
  const url = opts.url === ":memory:" ? ":memory:" : opts.url;
  let created: Promise<Client> | null = null;
  let closed = false;
  const client: ClientOf = () => {
    if (closed) return Promise.reject(new Error("the libSQL database was closed"));
    created ??= import("@libsql/client").then(({ createClient }) =>
      createClient({
        url,
        authToken: opts.authToken,
        intMode: "number",
        timeout: opts.busyTimeoutMs ?? 5_000,
      })
    );
    return created;
  };
  return {
    prepare(query: string): D1PreparedStatement {
      return new LibsqlStatement(client, query);
    },
    async batch<T = Record<string, unknown>>(
      statements: D1PreparedStatement[],
    ): Promise<D1Result<T>[]> {
      const stmts = statements.map((s) => {
        if (!(s instanceof LibsqlStatement)) {
          throw new TypeError("batch() takes statements prepared on this database");
        }
        return s.toStatement();
      });
      const results = await (await client()).batch(stmts, "write");
      return results.map((r) => toResult<T>(r));
    },
    close(): void {
      closed = true;
      created?.then((c) => c.close(), () => {});
    },
  };
}
