/**
 * Moving a whole storage in and out as a tarball (`storage export` / `storage import`): every
 * key with a value becomes one tar entry named after the key. Locks (`locks/…`) are process
 * state, never exported. Import stores each entry under its name, overwriting existing keys;
 * names that are not valid keys are refused before anything is written.
 *
 * @module
 */
import { isNotFound, normalizeKey, type Storage } from "../module/storage.ts";
import { readTar, tarEnd, tarEntry, TarError } from "./tar.ts";

/**
 * Writes every key of `storage` to `out` as a tarball; resolves to the number of keys.
 *
 * @example
 * ```ts ignore
 * await exportStorage(storage, Deno.stdout.writable);
 * ```
 */
export async function exportStorage(
  storage: Storage,
  out: WritableStream<Uint8Array>,
  warn: (msg: string) => void = () => {},
): Promise<number> {
  let keys: string[] = [];
  try {
    keys = await storage.list("", true);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  const w = out.getWriter();
  let n = 0;
  try {
    for (const key of keys) {
      if (key === "locks" || key.startsWith("locks/")) continue;
      let data: Uint8Array;
      let modified: Date;
      try {
        const info = await storage.stat(key);
        if (!info.isTerminal) continue;
        modified = info.modified;
        data = await storage.load(key);
      } catch (e) {
        if (isNotFound(e)) {
          warn(`key ${key} was removed while the export ran`);
          continue;
        }
        throw e;
      }
      await w.write(tarEntry({ name: key, data, modified }));
      n++;
    }
    await w.write(tarEnd());
    await w.close();
  } catch (e) {
    await w.abort(e).catch(() => {});
    throw e;
  }
  return n;
}

/**
 * Stores every file of the tarball `input` into `storage`; resolves to the number of keys.
 * The whole archive is read and checked first, so a malformed one writes nothing.
 *
 * @example
 * ```ts ignore
 * await importStorage(storage, Deno.stdin.readable);
 * ```
 */
export async function importStorage(
  storage: Storage,
  input: ReadableStream<Uint8Array>,
): Promise<number> {
  const entries: { key: string; data: Uint8Array }[] = [];
  for await (const e of readTar(input)) {
    let key: string;
    try {
      key = normalizeKey(e.name);
    } catch {
      throw new TarError(`entry ${JSON.stringify(e.name)} is not a valid storage key`);
    }
    if (!key) throw new TarError(`entry ${JSON.stringify(e.name)} is not a valid storage key`);
    entries.push({ key, data: e.data });
  }
  for (const e of entries) await storage.store(e.key, e.data);
  return entries.length;
}
