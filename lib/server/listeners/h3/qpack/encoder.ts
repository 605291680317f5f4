/**
 * The QPACK encoder of this side: static table only (RFC 9204 §2.1 allows an encoder that
 * never uses the dynamic table), so it sends nothing on an encoder stream, never blocks a
 * peer's decoder and needs no acknowledgments. Each field line is the static entry when one
 * matches name and value (Indexed Field Line), else a literal with the static entry's name
 * (Literal Field Line With Name Reference), else a literal name and value; strings are
 * Huffman-coded when that is shorter. Field lines that carry credentials (`authorization`,
 * `cookie`, `set-cookie`, `proxy-authorization`) have the never-indexed bit set, so an
 * intermediary that re-encodes them keeps them out of its dynamic table (§4.5.4).
 *
 * The encoding of a whole field line is kept for lines that repeat from response to response
 * (a server's `server`, `content-type`, `alt-svc`), up to `CACHE_LINES` of them.
 *
 * @module
 */
import { intSize, stringSize, writeInt, writeString } from "./primitives.ts";
import { STATIC_TABLE } from "./static_table.ts";

const EXACT = new Map<string, number>();
const NAMES = new Map<string, number>();
for (let i = STATIC_TABLE.length - 1; i >= 0; i--) {
  const [name, value] = STATIC_TABLE[i];
  EXACT.set(`${name}\0${value}`, i);
  NAMES.set(name, i);
}

const SENSITIVE = new Set(["authorization", "cookie", "set-cookie", "proxy-authorization"]);

/** Encoded field lines kept (whole lines: name and value). */
export const CACHE_LINES = 512;
/** Lines longer than this are not kept. */
const CACHE_MAX_LINE = 256;
const cache = new Map<string, Uint8Array>();

/** The encoding of one field line. */
function encodeLine(name: string, value: string): Uint8Array {
  const exact = EXACT.get(`${name}\0${value}`);
  if (exact !== undefined) {
    const out = new Uint8Array(intSize(exact, 6));
    writeInt(out, 0, exact, 6, 0xc0);
    return out;
  }
  const never = SENSITIVE.has(name) ? 0x20 : 0;
  const ref = NAMES.get(name);
  if (ref !== undefined) {
    const out = new Uint8Array(intSize(ref, 4) + stringSize(value, 7));
    writeString(out, writeInt(out, 0, ref, 4, 0x50 | never), value, 7, 0);
    return out;
  }
  const out = new Uint8Array(stringSize(name, 3) + stringSize(value, 7));
  writeString(out, writeString(out, 0, name, 3, 0x20 | (never >> 1)), value, 7, 0);
  return out;
}

/** A field line's encoding, from the cache when it was encoded before. */
function line(name: string, value: string): Uint8Array {
  if (name.length + value.length > CACHE_MAX_LINE || SENSITIVE.has(name)) {
    return encodeLine(name, value);
  }
  const key = `${name}:${value}`;
  let out = cache.get(key);
  if (out === undefined) {
    out = encodeLine(name, value);
    if (cache.size >= CACHE_LINES) cache.clear();
    cache.set(key, out);
  }
  return out;
}

/**
 * Encodes a field section from a flat `[name, value, ...]` list (names in lower case,
 * pseudo-header fields first) with `prefix` bytes left free in front of it (for the caller's
 * frame header).
 *
 * @example
 * ```ts
 * import { encodeFieldSection } from "./encoder.ts";
 * encodeFieldSection([":status", "200"], 0); // 00 00 d9
 * ```
 */
export function encodeFieldSection(fields: readonly string[], prefix: number): Uint8Array {
  const lines: Uint8Array[] = new Array(fields.length >> 1);
  let size = 2;
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const l = line(fields[i], fields[i + 1]);
    lines[i >> 1] = l;
    size += l.length;
  }
  const out = new Uint8Array(prefix + size);
  // Required Insert Count 0, Base 0: no dynamic table
  out[prefix] = 0;
  out[prefix + 1] = 0;
  let at = prefix + 2;
  for (const l of lines) {
    out.set(l, at);
    at += l.length;
  }
  return out;
}
