/**
 * The storages in use, shared by every handler that names the same one and kept across
 * config reloads while a loaded config uses them (a reload provisions the new handlers before
 * the old ones are cleaned up): a memory storage is one per pair of bounds (as the plugin's
 * otter storage is one per size), a disk storage one per directory (the latest config's
 * bounds apply). Each sweeps the entries past their `keepUntil` every
 * {@linkcode SWEEP_INTERVAL_MS}. The admin API reaches every storage through
 * {@linkcode liveStores}.
 *
 * @module
 */
import { DiskStore } from "./disk_store.ts";
import { type CacheStore, MemoryStore } from "./store.ts";

/** How often a storage drops the entries past their `keepUntil`. */
export const SWEEP_INTERVAL_MS = 30_000;

/** Which storage a handler uses. */
export type StoreSpec =
  | { kind: "memory"; maxEntries: number; maxBytes: number }
  | { kind: "disk"; path: string; maxEntries: number; maxBytes: number };

const pool = new Map<string, { store: CacheStore; timer: number }>();
const opening = new Map<string, Promise<CacheStore>>();

async function idOf(spec: StoreSpec): Promise<string> {
  if (spec.kind === "memory") return `memory:${spec.maxEntries}:${spec.maxBytes}`;
  await Deno.mkdir(spec.path, { recursive: true, mode: 0o700 });
  return `disk:${await Deno.realPath(spec.path)}`;
}

/** Takes a reference to the storage `spec` names, opened on first use. */
export async function acquireStore(spec: StoreSpec): Promise<CacheStore> {
  const id = await idOf(spec);
  const live = pool.get(id);
  if (live) {
    live.store.refs++;
    if (spec.kind === "disk") live.store.setBounds(spec.maxEntries, spec.maxBytes);
    return live.store;
  }
  let p = opening.get(id);
  if (!p) {
    p = spec.kind === "memory"
      ? Promise.resolve(new MemoryStore(spec.maxEntries, spec.maxBytes))
      : DiskStore.open(spec.path, spec.maxEntries, spec.maxBytes);
    opening.set(id, p);
  }
  let store: CacheStore;
  try {
    store = await p;
  } finally {
    opening.delete(id);
  }
  const again = pool.get(id);
  if (again) {
    again.store.refs++;
    return again.store;
  }
  const timer = setInterval(() => store.sweep(Date.now()), SWEEP_INTERVAL_MS) as unknown as number;
  Deno.unrefTimer(timer);
  pool.set(id, { store, timer });
  store.refs++;
  return store;
}

/** Drops a reference; the storage closes once no loaded config uses it. */
export function releaseStore(store: CacheStore): void {
  store.refs--;
  if (store.refs > 0) return;
  for (const [id, live] of pool) {
    if (live.store !== store) continue;
    clearInterval(live.timer);
    pool.delete(id);
    store.close();
  }
}

/** Every storage in use. */
export function liveStores(): CacheStore[] {
  return [...pool.values()].map((l) => l.store);
}
