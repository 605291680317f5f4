/**
 * What a cache storage is, and the memory one (`otter`). A storage keeps entries by key, each
 * key with up to {@linkcode MAX_VARIANTS} variants (answers that `Vary`), bounded in entries
 * and in bytes: the least recently used keys go first when a new entry does not fit, and
 * entries past their `keepUntil` are dropped by a sweep. Sizes are the storage's own
 * accounting: the body, every field name and value, the key and URL, and a fixed
 * {@linkcode ENTRY_OVERHEAD} per entry and {@linkcode FIELD_OVERHEAD} per field.
 *
 * @module
 */
import type { BodyRef, Entry } from "./entry.ts";

/** Variants kept per key; the oldest goes when an answer varies more. */
export const MAX_VARIANTS = 16;
/**
 * Bytes counted per entry beside its body, fields, key and URL, and per field: what its
 * objects take in the JavaScript heap (measured with 1 KiB answers of four fields, the
 * accounting is within a fifth of the heap and buffer memory the entries keep).
 */
export const ENTRY_OVERHEAD = 1024;
export const FIELD_OVERHEAD = 96;

/** Where a body being received goes until it is complete. */
export interface BodySink {
  /** Bytes written so far. */
  readonly size: number;
  /** Adds a chunk. */
  write(chunk: Uint8Array): void | Promise<void>;
  /** The complete body. */
  finish(): Promise<BodyRef>;
  /** Drops what was written. */
  abort(): void;
}

/** A storage's figures (the admin API's `GET /cache/`). */
export interface StoreStats {
  /** `memory` or `disk`. */
  kind: string;
  /** Entries (variants counted one by one) and keys. */
  entries: number;
  keys: number;
  /** Bytes in its accounting. */
  bytes: number;
  /** Its bounds. */
  max_entries: number;
  max_bytes: number;
  /** The directory of a disk storage. */
  path?: string;
}

/** The bytes an entry counts for (see the module documentation). */
export function entrySize(e: Entry, bodySize: number): number {
  let n = ENTRY_OVERHEAD + bodySize + e.key.length + e.url.length;
  for (const [k, v] of e.headers) n += FIELD_OVERHEAD + k.length + v.length;
  return n;
}

/** A request field's value as a variant compares it (RFC 9111 §4.1: whitespace normalised). */
export function varyValue(h: Headers, name: string): string {
  const v = h.get(name);
  return v === null ? "\u0000" : v.trim().replace(/\s*,\s*/g, ",").replace(/\s+/g, " ");
}

/** True when the stored variant answers a request with fields `h`. */
export function variantMatches(e: Entry, h: Headers): boolean {
  for (let i = 0; i < e.vary.length; i++) {
    if (varyValue(h, e.vary[i]) !== e.varyValues[i]) return false;
  }
  return true;
}

/** A cache storage. */
export abstract class CacheStore {
  /** `memory` or `disk`. */
  abstract readonly kind: string;
  /** Most entries and bytes. */
  maxEntries: number;
  maxBytes: number;
  /** Bumped by each purge: an answer received across a purge is not stored. */
  generation = 0;
  /** Loaded handlers using it. */
  refs = 0;
  protected readonly byKey: Map<string, Entry[]> = new Map();
  #entries = 0;
  #bytes = 0;

  /** A storage bounded to `maxEntries` and `maxBytes`. */
  constructor(maxEntries: number, maxBytes: number) {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
  }

  /** Entries and bytes held. */
  get entries(): number {
    return this.#entries;
  }
  get bytes(): number {
    return this.#bytes;
  }

  /** A key's variants (the key becomes the most recently used). */
  variants(key: string): Entry[] | undefined {
    const list = this.byKey.get(key);
    if (list !== undefined) {
      this.byKey.delete(key);
      this.byKey.set(key, list);
    }
    return list;
  }

  /** A sink for a body of up to `max` bytes. */
  abstract sink(): BodySink;

  /** The body of an entry kept outside memory, to answer with; null when it is gone. */
  abstract body(e: Entry): Promise<Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null>;

  /** Releases what a dropped entry's body holds. */
  protected abstract release(e: Entry): void;

  /** Releases a body that will not be stored after all. */
  abstract discard(body: BodyRef): void;

  /** Records a new or updated entry's metadata where the storage keeps it. */
  protected abstract persist(e: Entry): void;

  /**
   * Stores an entry (its body complete), replacing the variant with the same `Vary` values,
   * then drops the least recently used keys until the bounds hold. False when the entry alone
   * is larger than the storage.
   */
  put(e: Entry): boolean {
    if (e.size > this.maxBytes) {
      this.release(e);
      return false;
    }
    let list = this.byKey.get(e.key);
    if (list === undefined) list = [];
    else this.byKey.delete(e.key);
    const same = list.findIndex((v) =>
      v.vary.length === e.vary.length && v.vary.every((n, i) => n === e.vary[i]) &&
      v.varyValues.every((x, i) => x === e.varyValues[i])
    );
    if (same >= 0) this.#drop(list.splice(same, 1)[0]);
    // an answer that varies on other fields than the stored ones replaces them all
    if (list.length && list[0].vary.join() !== e.vary.join()) {
      for (const v of list.splice(0)) this.#drop(v);
    }
    list.push(e);
    if (list.length > MAX_VARIANTS) this.#drop(list.shift()!);
    this.byKey.set(e.key, list);
    this.#entries++;
    this.#bytes += e.size;
    this.persist(e);
    this.#bound();
    return true;
  }

  /** New bounds (a reloaded config's), applied at once. */
  setBounds(maxEntries: number, maxBytes: number): void {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.#bound();
  }

  /** Re-accounts an entry whose fields a `304` changed. */
  updated(e: Entry, oldSize: number): void {
    this.#bytes += e.size - oldSize;
    this.persist(e);
    this.#bound();
  }

  #drop(e: Entry): void {
    this.#entries--;
    this.#bytes -= e.size;
    this.release(e);
  }

  #bound(): void {
    for (const [key, list] of this.byKey) {
      if (this.#entries <= this.maxEntries && this.#bytes <= this.maxBytes) return;
      this.byKey.delete(key);
      for (const e of list) this.#drop(e);
    }
  }

  /** Drops one entry. */
  remove(e: Entry): void {
    const list = this.byKey.get(e.key);
    const i = list?.indexOf(e) ?? -1;
    if (i < 0) return;
    list!.splice(i, 1);
    if (list!.length === 0) this.byKey.delete(e.key);
    this.#drop(e);
  }

  /** Drops every entry `pred` selects; the number dropped. */
  purge(pred: (e: Entry) => boolean): number {
    this.generation++;
    let n = 0;
    for (const [key, list] of this.byKey) {
      const keep = list.filter((e) => {
        if (!pred(e)) return true;
        this.#drop(e);
        n++;
        return false;
      });
      if (keep.length === 0) this.byKey.delete(key);
      else if (keep.length !== list.length) this.byKey.set(key, keep);
    }
    return n;
  }

  /** Drops a key's entries; the number dropped. */
  delete(key: string): number {
    const list = this.byKey.get(key);
    if (!list) return 0;
    this.generation++;
    this.byKey.delete(key);
    for (const e of list) this.#drop(e);
    return list.length;
  }

  /** Drops the entries past their `keepUntil`. */
  sweep(now: number): void {
    for (const [key, list] of this.byKey) {
      const keep = list.filter((e) => {
        if (e.keepUntil >= now) return true;
        this.#drop(e);
        return false;
      });
      if (keep.length === 0) this.byKey.delete(key);
      else if (keep.length !== list.length) this.byKey.set(key, keep);
    }
  }

  /** Every key with its entries, least recently used first. */
  all(): IterableIterator<[string, Entry[]]> {
    return this.byKey.entries();
  }

  /** Its figures. */
  stats(): StoreStats {
    return {
      kind: this.kind,
      entries: this.#entries,
      keys: this.byKey.size,
      bytes: this.#bytes,
      max_entries: this.maxEntries,
      max_bytes: this.maxBytes,
    };
  }

  /** Called when no loaded config uses it any more. */
  close(): void | Promise<void> {}
}

class MemorySink implements BodySink {
  #chunks: Uint8Array<ArrayBuffer>[] = [];
  size = 0;
  write(chunk: Uint8Array): void {
    // a copy: whoever made the chunk may fill its buffer again
    this.#chunks.push(chunk.slice());
    this.size += chunk.length;
  }
  finish(): Promise<BodyRef> {
    const bytes = this.#chunks.length === 1 ? this.#chunks[0] : new Uint8Array(this.size);
    if (this.#chunks.length !== 1) {
      let at = 0;
      for (const c of this.#chunks) {
        bytes.set(c, at);
        at += c.length;
      }
    }
    this.#chunks = [];
    return Promise.resolve({ kind: "memory", bytes });
  }
  abort(): void {
    this.#chunks = [];
  }
}

/** The memory storage (`otter`). */
export class MemoryStore extends CacheStore {
  readonly kind = "memory";
  sink(): BodySink {
    return new MemorySink();
  }
  body(): Promise<null> {
    return Promise.resolve(null);
  }
  protected release(): void {}
  protected persist(): void {}
  discard(): void {}
}
