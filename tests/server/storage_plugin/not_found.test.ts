/**
 * A storage that keeps keys itself and does not import Gatehouse (a plugin's) reports a missing
 * key with an `Error` whose `code` is "not_found"; Gatehouse reads that as a missing key
 * everywhere it reads storage (loadText, export), and other errors still fail.
 */
import assert from "node:assert/strict";
import type { KeyInfo, Storage } from "../../../lib/server/module/storage.ts";
import { isNotFound, loadText } from "../../../lib/server/module/storage.ts";
import { exportStorage } from "../../../lib/server/storage/transfer.ts";
import { readTar } from "../../../lib/server/storage/tar.ts";

function notFound(key: string): Error {
  return Object.assign(new Error(`no such key: ${key}`), { code: "not_found" });
}

/** A map of keys; a key listed in `vanishing` disappears between its stat and its load. */
class MapStorage implements Storage {
  data = new Map<string, Uint8Array>();
  vanishing = new Set<string>();
  load(key: string): Promise<Uint8Array> {
    const v = this.data.get(key);
    return v ? Promise.resolve(v) : Promise.reject(notFound(key));
  }
  store(key: string, value: Uint8Array): Promise<void> {
    this.data.set(key, value);
    return Promise.resolve();
  }
  delete(key: string): Promise<void> {
    return this.data.delete(key) ? Promise.resolve() : Promise.reject(notFound(key));
  }
  exists(key: string): Promise<boolean> {
    return Promise.resolve(this.data.has(key));
  }
  list(prefix: string): Promise<string[]> {
    const keys = [...this.data.keys()].filter((k) => k.startsWith(prefix)).sort();
    return keys.length ? Promise.resolve(keys) : Promise.reject(notFound(prefix));
  }
  stat(key: string): Promise<KeyInfo> {
    if (!this.data.has(key)) return Promise.reject(notFound(key));
    const info = { key, modified: new Date(0), size: this.data.get(key)!.length, isTerminal: true };
    if (this.vanishing.has(key)) this.data.delete(key);
    return Promise.resolve(info);
  }
  lock(): Promise<void> {
    return Promise.resolve();
  }
  tryLock(): Promise<boolean> {
    return Promise.resolve(true);
  }
  unlock(): Promise<void> {
    return Promise.resolve();
  }
  toString(): string {
    return "MapStorage";
  }
}

async function tarNames(bytes: Uint8Array): Promise<string[]> {
  const names: string[] = [];
  for await (const e of readTar(new Blob([bytes.slice()]).stream())) names.push(e.name);
  return names;
}

Deno.test("storage plugin: an Error with code not_found is a missing key to loadText and export", async () => {
  const s = new MapStorage();
  assert.equal(isNotFound(notFound("x")), true);
  assert.equal(isNotFound(new Error("disk on fire")), false);
  assert.equal(isNotFound({ code: "not_found" }), false, "only Errors");

  assert.equal(await loadText(s, "certificates/a.crt"), undefined);
  await s.store("certificates/a.crt", new TextEncoder().encode("A"));
  assert.equal(await loadText(s, "certificates/a.crt"), "A");

  // an empty storage exports an empty archive; a key gone mid-export is skipped with a warning
  const empty = new MapStorage();
  const none = new TransformStream<Uint8Array, Uint8Array>();
  const [n0, bytes0] = await Promise.all([
    exportStorage(empty, none.writable),
    new Response(none.readable).bytes(),
  ]);
  assert.equal(n0, 0);
  assert.deepEqual(await tarNames(bytes0), []);

  await s.store("certificates/b.crt", new TextEncoder().encode("B"));
  s.vanishing.add("certificates/b.crt");
  const warnings: string[] = [];
  const out = new TransformStream<Uint8Array, Uint8Array>();
  const [n, bytes] = await Promise.all([
    exportStorage(s, out.writable, (w) => warnings.push(w)),
    new Response(out.readable).bytes(),
  ]);
  assert.equal(n, 1);
  assert.deepEqual(await tarNames(bytes), ["certificates/a.crt"]);
  assert.deepEqual(warnings, ["key certificates/b.crt was removed while the export ran"]);
});

Deno.test("storage plugin: any other error from the storage still fails the read", async () => {
  const s = new MapStorage();
  s.load = () => Promise.reject(new Error("disk on fire"));
  await assert.rejects(loadText(s, "k"), /disk on fire/);
});
