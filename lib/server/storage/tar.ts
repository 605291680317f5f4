/**
 * The tarball of `storage export` / `storage import`: POSIX ustar entries, one regular file per
 * storage key (mode 0600, the key's modification time). A key longer than the ustar name
 * fields allow gets a PAX `path` record. The reader accepts ustar, PAX `path` records and GNU
 * long names, skips directories and other entry types, and refuses anything malformed with a
 * TarError naming the offset (never a partial value).
 *
 * Limits: one entry's value is read into memory (storage values are small: certificates,
 * keys, JSON); an entry larger than 64 MiB is refused.
 *
 * @module
 */

/** A malformed or unsupported tarball. */
export class TarError extends Error {
  /** Stable code. */
  readonly code = "invalid_tar";
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "TarError";
  }
}

/** One file of a tarball. */
export interface TarEntry {
  /** Path inside the archive (a storage key). */
  name: string;
  /** Contents. */
  data: Uint8Array;
  /** Modification time. */
  modified: Date;
}

/** Largest entry accepted by the reader. */
export const MAX_TAR_ENTRY = 64 * 1024 * 1024;

const BLOCK = 512;
const enc = new TextEncoder();

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, "0") + "\0";
}

function header(name: string, size: number, mtime: number, type: string, prefix = ""): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (s: string, off: number, len: number) => h.set(enc.encode(s).subarray(0, len), off);
  put(name, 0, 100);
  put(octal(0o600, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(Math.max(0, Math.floor(mtime)), 12), 136, 12);
  put("        ", 148, 8);
  put(type, 156, 1);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  put(prefix, 345, 155);
  let sum = 0;
  for (const b of h) sum += b;
  put(octal(sum, 7) + " ", 148, 8);
  return h;
}

function padding(size: number): Uint8Array {
  return new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK);
}

/** Splits a long name into ustar prefix (≤155 bytes) and name (≤100 bytes), if possible. */
function splitName(name: string): { prefix: string; name: string } | null {
  const bytes = enc.encode(name).length;
  if (bytes <= 100) return { prefix: "", name };
  for (let i = name.indexOf("/"); i >= 0; i = name.indexOf("/", i + 1)) {
    const p = name.slice(0, i);
    const n = name.slice(i + 1);
    if (enc.encode(p).length <= 155 && enc.encode(n).length <= 100 && n) {
      return { prefix: p, name: n };
    }
  }
  return null;
}

function paxRecord(key: string, value: string): Uint8Array {
  const body = ` ${key}=${value}\n`;
  const n = enc.encode(body).length;
  let len = n + String(n).length;
  while (n + String(len).length !== len) len = n + String(len).length;
  return enc.encode(`${len}${body}`);
}

/**
 * Encodes one entry (header, data, padding).
 *
 * @example
 * ```ts
 * import { tarEntry } from "./tar.ts";
 * tarEntry({ name: "a/b", data: new Uint8Array([1]), modified: new Date() }).length; // 1024
 * ```
 */
export function tarEntry(e: TarEntry): Uint8Array<ArrayBuffer> {
  const mtime = e.modified.getTime() / 1000;
  const parts: Uint8Array[] = [];
  const split = splitName(e.name);
  if (split) parts.push(header(split.name, e.data.length, mtime, "0", split.prefix));
  else {
    const pax = paxRecord("path", e.name);
    parts.push(header("PaxHeader", pax.length, mtime, "x"), pax, padding(pax.length));
    parts.push(header(e.name.slice(-100), e.data.length, mtime, "0"));
  }
  parts.push(e.data, padding(e.data.length));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** The two zero blocks that end a tarball. */
export function tarEnd(): Uint8Array<ArrayBuffer> {
  return new Uint8Array(2 * BLOCK);
}

/** Reads exactly n bytes from a stream reader, keeping leftovers. */
class ByteReader {
  #buf = new Uint8Array(0);
  #done = false;
  offset = 0;
  constructor(readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** Exactly `n` bytes, or null at a clean end of input (nothing buffered). */
  async read(n: number): Promise<Uint8Array | null> {
    while (this.#buf.length < n && !this.#done) {
      const r = await this.reader.read();
      if (r.done) this.#done = true;
      else {
        const next = new Uint8Array(this.#buf.length + r.value.length);
        next.set(this.#buf);
        next.set(r.value, this.#buf.length);
        this.#buf = next;
      }
    }
    if (this.#buf.length === 0 && this.#done) return null;
    if (this.#buf.length < n) {
      throw new TarError(`truncated tarball at byte ${this.offset + this.#buf.length}`);
    }
    const out = this.#buf.slice(0, n);
    this.#buf = this.#buf.subarray(n);
    this.offset += n;
    return out;
  }
}

function field(h: Uint8Array, off: number, len: number): string {
  const s = h.subarray(off, off + len);
  const end = s.indexOf(0);
  return new TextDecoder().decode(end < 0 ? s : s.subarray(0, end));
}

function number(h: Uint8Array, off: number, len: number, what: string, at: number): number {
  const s = field(h, off, len).trim();
  if (s === "") return 0;
  if (!/^[0-7]+$/.test(s)) throw new TarError(`bad ${what} field in header at byte ${at}`);
  return parseInt(s, 8);
}

function parsePax(data: Uint8Array, at: number): Record<string, string> {
  const out: Record<string, string> = {};
  const text = new TextDecoder().decode(data);
  let i = 0;
  while (i < text.length) {
    const sp = text.indexOf(" ", i);
    const len = Number(text.slice(i, sp));
    if (sp < 0 || !Number.isInteger(len) || len <= 0 || i + len > text.length) {
      throw new TarError(`bad PAX record in entry at byte ${at}`);
    }
    const rec = text.slice(sp + 1, i + len - 1);
    const eq = rec.indexOf("=");
    if (eq < 0) throw new TarError(`bad PAX record in entry at byte ${at}`);
    out[rec.slice(0, eq)] = rec.slice(eq + 1);
    i += len;
  }
  return out;
}

/**
 * Reads the regular files of a tarball stream, in order.
 *
 * @example
 * ```ts
 * import { readTar, tarEnd, tarEntry } from "./tar.ts";
 * const bytes = new Blob([tarEntry({ name: "k", data: new Uint8Array([7]), modified: new Date() }), tarEnd()]);
 * for await (const e of readTar(bytes.stream())) console.log(e.name, e.data);
 * ```
 */
export async function* readTar(stream: ReadableStream<Uint8Array>): AsyncGenerator<TarEntry> {
  const r = new ByteReader(stream.getReader());
  let longName: string | undefined;
  let seen = 0;
  try {
    for (;;) {
      const at = r.offset;
      const h = await r.read(BLOCK);
      if (h === null) {
        if (seen === 0) throw new TarError("empty input: not a tarball");
        return; // no end blocks: accepted, as GNU tar does with a warning
      }
      if (h.every((b) => b === 0)) return;
      seen++;
      let sum = 0;
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
      const stored = /^[0-7]+$/.test(field(h, 148, 8).trim())
        ? parseInt(field(h, 148, 8).trim(), 8)
        : -1;
      if (stored !== sum) {
        throw new TarError(`bad header checksum at byte ${at} (not a tarball?)`);
      }
      const size = number(h, 124, 12, "size", at);
      if (size > MAX_TAR_ENTRY) {
        throw new TarError(`entry at byte ${at} is ${size} bytes; the limit is ${MAX_TAR_ENTRY}`);
      }
      const type = String.fromCharCode(h[156] || 48);
      const data = (await r.read(size)) ?? new Uint8Array();
      if (data.length !== size) throw new TarError(`truncated entry at byte ${at}`);
      await r.read((BLOCK - (size % BLOCK)) % BLOCK);
      if (type === "x") {
        const pax = parsePax(data, at);
        if (pax.path !== undefined) longName = pax.path;
        continue;
      }
      if (type === "L") {
        longName = field(data, 0, data.length);
        continue;
      }
      if (type === "g") continue;
      const magic = field(h, 257, 6);
      const prefix = magic.startsWith("ustar") ? field(h, 345, 155) : "";
      const name = longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
      longName = undefined;
      if (type !== "0" && type !== "\0") continue; // directories, links, devices
      yield { name, data, modified: new Date(number(h, 136, 12, "mtime", at) * 1000) };
    }
  } finally {
    r.reader.releaseLock();
  }
}
