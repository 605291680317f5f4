/**
 * `caddy.storage.file_system`: keys are paths under `root` (default: the data directory),
 * directories 0700, files 0600. Writes are atomic (temp file, fsync, rename). A lock is a file
 * `locks/<name>.lock` holding `{"created", "updated"}` (certmagic's format), refreshed by its
 * holder every 5 s; one not refreshed for 10 s is stale and is taken over.
 *
 * Config: `{"module": "file_system", "root": "/var/lib/gatehouse"}`.
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import type { ModuleInstance } from "../module/instance.ts";
import { dataDir } from "./dirs.ts";
import { Decoder } from "../config/decode.ts";
import {
  cleanUpOwnLocks,
  type KeyInfo,
  LOCK_POLL_MS,
  LOCK_REFRESH_MS,
  normalizeKey,
  safeKey,
  sleep,
  STALE_LOCK_MS,
  type Storage,
  StorageNotFoundError,
  trackLock,
  untrackLock,
} from "../module/storage.ts";

export { cleanUpOwnLocks };

/** Writes `data` to `path` atomically: temp file in the same directory, fsync, rename. */
export async function writeFileAtomic(path: string, data: Uint8Array, mode = 0o600): Promise<void> {
  const slash = path.lastIndexOf("/");
  const dir = slash > 0 ? path.slice(0, slash) : ".";
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${crypto.randomUUID()}`;
  const f = await Deno.open(tmp, { write: true, create: true, truncate: true, mode });
  try {
    let off = 0;
    while (off < data.length) off += await f.write(data.subarray(off));
    await f.sync();
  } finally {
    f.close();
  }
  try {
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
  try {
    const d = await Deno.open(dir, { read: true });
    try {
      await d.sync();
    } finally {
      d.close();
    }
  } catch { /* some platforms cannot fsync a directory */ }
}

function notFound(e: unknown, key: string): never {
  if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.NotADirectory) {
    throw new StorageNotFoundError(key);
  }
  throw e;
}

interface LockMeta {
  created?: string;
  updated?: string;
}

/** The file storage rooted at `root`. */
class FileStorage implements Storage, ModuleInstance {
  readonly #timers = new Map<string, ReturnType<typeof setInterval>>();
  constructor(readonly root: string) {}

  #path(key: string): string {
    const k = normalizeKey(key);
    return k ? `${this.root}/${k}` : this.root;
  }

  async load(key: string): Promise<Uint8Array> {
    try {
      return await Deno.readFile(this.#path(key));
    } catch (e) {
      if (e instanceof Deno.errors.IsADirectory) throw new StorageNotFoundError(key);
      notFound(e, key);
    }
  }

  async store(key: string, value: Uint8Array): Promise<void> {
    if (!normalizeKey(key)) throw new StorageNotFoundError(key);
    await writeFileAtomic(this.#path(key), value);
  }

  async delete(key: string): Promise<void> {
    try {
      await Deno.remove(this.#path(key), { recursive: true });
    } catch (e) {
      notFound(e, key);
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await Deno.stat(this.#path(key));
      return true;
    } catch {
      return false;
    }
  }

  async stat(key: string): Promise<KeyInfo> {
    try {
      const st = await Deno.stat(this.#path(key));
      return {
        key: normalizeKey(key),
        modified: st.mtime ?? new Date(0),
        size: st.isFile ? st.size : 0,
        isTerminal: st.isFile,
      };
    } catch (e) {
      notFound(e, key);
    }
  }

  async list(prefix: string, recursive: boolean): Promise<string[]> {
    const base = normalizeKey(prefix);
    const out: string[] = [];
    const walk = async (rel: string, top: boolean): Promise<void> => {
      let entries: Deno.DirEntry[];
      try {
        entries = await Array.fromAsync(Deno.readDir(rel ? `${this.root}/${rel}` : this.root));
      } catch (e) {
        if (top) notFound(e, prefix);
        return; // removed while walking
      }
      for (const e of entries) {
        if (e.name.includes(".tmp-")) continue; // an atomic write in progress
        const k = rel ? `${rel}/${e.name}` : e.name;
        out.push(k);
        if (recursive && e.isDirectory) await walk(k, false);
      }
    };
    await walk(base, true);
    return out.sort();
  }

  #lockPath(name: string): string {
    return `${this.root}/locks/${safeKey(name)}.lock`;
  }

  async #isStale(path: string): Promise<boolean> {
    let meta: LockMeta = {};
    try {
      meta = JSON.parse(await Deno.readTextFile(path));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false; // released meanwhile: retry create
      // unreadable or half-written: judge by the file's modification time
    }
    let ref = Date.parse(meta.updated ?? meta.created ?? "");
    if (Number.isNaN(ref)) {
      const st = await Deno.stat(path).catch(() => null);
      if (!st) return false;
      ref = st.mtime?.getTime() ?? 0;
    }
    return Date.now() - ref > STALE_LOCK_MS;
  }

  async #create(name: string): Promise<boolean> {
    const path = this.#lockPath(name);
    await Deno.mkdir(`${this.root}/locks`, { recursive: true, mode: 0o700 });
    const now = new Date().toISOString();
    try {
      const f = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
      try {
        await f.write(new TextEncoder().encode(JSON.stringify({ created: now, updated: now })));
      } finally {
        f.close();
      }
    } catch (e) {
      if (e instanceof Deno.errors.AlreadyExists) return false;
      throw e;
    }
    const timer = setInterval(() => {
      const meta = JSON.stringify({ created: now, updated: new Date().toISOString() });
      Deno.writeTextFile(path, meta).catch(() => {});
    }, LOCK_REFRESH_MS);
    Deno.unrefTimer(timer as unknown as number);
    this.#timers.set(path, timer);
    trackLock(this, `${this}|${name}`, () => this.unlock(name));
    return true;
  }

  async tryLock(name: string): Promise<boolean> {
    if (await this.#create(name)) return true;
    const path = this.#lockPath(name);
    if (await this.#isStale(path)) {
      await Deno.remove(path).catch(() => {});
      return await this.#create(name);
    }
    return false;
  }

  async lock(name: string, signal?: AbortSignal): Promise<void> {
    while (!(await this.tryLock(name))) await sleep(LOCK_POLL_MS, signal);
  }

  unlock(name: string): Promise<void> {
    const path = this.#lockPath(name);
    const timer = this.#timers.get(path);
    if (timer !== undefined) clearInterval(timer);
    this.#timers.delete(path);
    untrackLock(`${this}|${name}`);
    // Synchronous on purpose: the SIGQUIT path releases locks right before exiting.
    try {
      Deno.removeSync(path);
    } catch { /* already gone */ }
    return Promise.resolve();
  }

  toString(): string {
    return `FileStorage:${this.root}`;
  }

  cleanup(): void {
    // Locks outlive a config change only while their job runs; jobs release them.
  }
}

/**
 * A file-system storage rooted at `root`.
 *
 * @example
 * ```ts
 * import { fileStorage } from "./file_system.ts";
 * const s = fileStorage(await Deno.makeTempDir());
 * await s.store("a/b", new TextEncoder().encode("x"));
 * ```
 */
export function fileStorage(root: string = dataDir()): Storage {
  return new FileStorage(root.replace(/\/+$/, "") || "/");
}

/**
 * Registry entry of `caddy.storage.file_system`.
 *
 * @example
 * ```ts
 * import { fileSystemStorageModule } from "./file_system.ts";
 * fileSystemStorageModule.id; // "caddy.storage.file_system"
 * ```
 */
export const fileSystemStorageModule: ModuleDefinition<Storage & ModuleInstance> = {
  id: "caddy.storage.file_system",
  create: (c) => {
    const d = new Decoder(c, "file_system storage");
    // the field audit lists this field itself (a storage decodes its own config)
    for (const k of Object.keys(c)) {
      if (k !== "root") d.fail(`unknown field "${k}"`, "unknown_field");
    }
    if (c.root !== undefined && (typeof c.root !== "string" || c.root === "")) {
      d.fail("root must be a non-empty string");
    }
    return new FileStorage(((c.root as string | undefined) || dataDir()).replace(/\/+$/, ""));
  },
};
