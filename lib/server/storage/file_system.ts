/**
 * `caddy.storage.file_system`: keys are paths under `root` (default: the data directory).
 * Writes are atomic (temp file, fsync, rename). Locks are files that the holder refreshes;
 * a lock not refreshed for 10 seconds is stale and may be taken over.
 *
 * @module
 */
import { type ModuleInstance, registerModule, type Storage } from "../module.ts";
import { dataDir } from "./dirs.ts";

const held = new Map<string, ReturnType<typeof setInterval>>(); // lock path -> refresh timer

/**
 * Removes every lock this process holds (used on exit, including SIGQUIT).
 *
 * @example
 * ```ts
 * import { cleanUpOwnLocks } from "./file_system.ts";
 * cleanUpOwnLocks();
 * ```
 */
export function cleanUpOwnLocks(): void {
  for (const [path, timer] of held) {
    clearInterval(timer);
    try {
      Deno.removeSync(path);
    } catch { /* already gone */ }
  }
  held.clear();
}

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

function checkKey(key: string): string {
  const parts = key.split("/").filter((p) => p !== "");
  if (parts.some((p) => p === "..")) throw new Error(`invalid storage key: ${key}`);
  return parts.join("/");
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
  const p = (key: string) => `${root}/${checkKey(key)}`;
  return {
    async load(key) {
      try {
        return await Deno.readFile(p(key));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
    },
    store: (key, value) => writeFileAtomic(p(key), value),
    async delete(key) {
      await Deno.remove(p(key), { recursive: true }).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
    },
    async exists(key) {
      try {
        await Deno.stat(p(key));
        return true;
      } catch {
        return false;
      }
    },
    async list(prefix, recursive) {
      const base = checkKey(prefix);
      const out: string[] = [];
      const walk = async (rel: string) => {
        let entries: Deno.DirEntry[] = [];
        try {
          entries = await Array.fromAsync(Deno.readDir(rel ? `${root}/${rel}` : root));
        } catch (e) {
          if (e instanceof Deno.errors.NotFound) return;
          throw e;
        }
        for (const e of entries) {
          const k = rel ? `${rel}/${e.name}` : e.name;
          out.push(k);
          if (recursive && e.isDirectory) await walk(k);
        }
      };
      await walk(base);
      return out.sort();
    },
    async lock(name) {
      const path = `${root}/locks/${checkKey(name).replaceAll("/", "_")}.lock`;
      await Deno.mkdir(`${root}/locks`, { recursive: true, mode: 0o700 });
      for (;;) {
        try {
          const f = await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
          await f.write(
            new TextEncoder().encode(JSON.stringify({ pid: Deno.pid, created: Date.now() })),
          );
          f.close();
          const timer = setInterval(() => {
            const now = new Date();
            Deno.utime(path, now, now).catch(() => {});
          }, 5000);
          Deno.unrefTimer(timer as unknown as number);
          held.set(path, timer);
          return;
        } catch (e) {
          if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
          const st = await Deno.stat(path).catch(() => null);
          if (st && Date.now() - (st.mtime?.getTime() ?? 0) > 10_000) {
            await Deno.remove(path).catch(() => {});
            continue;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    async unlock(name) {
      const path = `${root}/locks/${checkKey(name).replaceAll("/", "_")}.lock`;
      const timer = held.get(path);
      if (timer !== undefined) clearInterval(timer);
      held.delete(path);
      await Deno.remove(path).catch(() => {});
    },
  };
}

registerModule({
  id: "caddy.storage.file_system",
  create: (c) => {
    if (c.root !== undefined && typeof c.root !== "string") {
      throw new Error("file_system storage: root must be a string");
    }
    return fileStorage((c.root as string) || dataDir()) as Storage & ModuleInstance;
  },
});
