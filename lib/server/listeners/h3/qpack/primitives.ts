/**
 * QPACK's primitives (RFC 9204 §4.1): prefixed integers (RFC 7541 §5.1: the low N bits of a
 * first byte, continued in 7-bit groups when they are all ones) and string literals (an H bit,
 * a length with an N-bit prefix, then the bytes, Huffman-coded when H is set).
 *
 * Readers work on a `Cursor` and return -1 / null, without moving it, when the bytes end
 * inside the value (the encoder stream arrives in pieces); they throw `H3Error` with the
 * caller's code for what can never become valid (an integer over 2^53, a string longer than
 * the caller allows, a bad Huffman coding).
 *
 * @module
 */
import { H3Error, type H3ErrorCode } from "../errors.ts";
import type { Cursor } from "../varint.ts";
import { huffmanDecode, huffmanEncode, huffmanLength, latin1 } from "./huffman.ts";

/**
 * Reads an integer with an N-bit prefix (the first byte's other bits are the caller's); -1
 * when incomplete.
 *
 * @example
 * ```ts
 * import { readInt } from "./primitives.ts";
 * import { Cursor } from "../varint.ts";
 * // RFC 7541 C.1.2: 1337 with a 5-bit prefix
 * readInt(new Cursor(new Uint8Array([0x1f, 0x9a, 0x0a])), 5, 0x200); // 1337
 * ```
 */
export function readInt(c: Cursor, prefix: number, code: H3ErrorCode): number {
  let p = c.pos;
  if (p >= c.end) return -1;
  const mask = (1 << prefix) - 1;
  let v = c.buf[p++] & mask;
  if (v < mask) {
    c.pos = p;
    return v;
  }
  let scale = 1;
  for (;;) {
    if (p >= c.end) return -1;
    const b = c.buf[p++];
    v += (b & 0x7f) * scale;
    if (v > Number.MAX_SAFE_INTEGER) throw new H3Error(code, "QPACK integer too large");
    if ((b & 0x80) === 0) break;
    scale *= 128;
  }
  c.pos = p;
  return v;
}

/**
 * Reads a string literal whose H bit is the bit above an N-bit length prefix; null when
 * incomplete. A length over `max` is an error at once, before its bytes arrive.
 */
export function readString(
  c: Cursor,
  prefix: number,
  max: number,
  code: H3ErrorCode,
): string | null {
  const start = c.pos;
  if (start >= c.end) return null;
  const huffman = (c.buf[start] & (1 << prefix)) !== 0;
  const len = readInt(c, prefix, code);
  if (len < 0) return null;
  // a Huffman coding is at least 5/8 of its text (the shortest code is 5 bits)
  if ((huffman ? Math.ceil((len * 8) / 30) : len) > max) {
    c.pos = start;
    throw new H3Error(code, `QPACK string literal too long (${len} bytes)`);
  }
  if (c.end - c.pos < len) {
    c.pos = start;
    return null;
  }
  const at = c.pos;
  c.pos = at + len;
  if (!huffman) return latin1(c.buf, at, len);
  const s = huffmanDecode(c.buf, at, len);
  if (s === null) {
    c.pos = start;
    throw new H3Error(code, "invalid Huffman coding in a QPACK string literal");
  }
  if (s.length > max) {
    c.pos = start;
    throw new H3Error(code, `QPACK string literal too long (${s.length} bytes)`);
  }
  return s;
}

/** Bytes of an integer with an N-bit prefix. */
export function intSize(v: number, prefix: number): number {
  const mask = (1 << prefix) - 1;
  if (v < mask) return 1;
  let n = 2;
  for (v -= mask; v >= 128; v = Math.floor(v / 128)) n++;
  return n;
}

/** Writes an integer with an N-bit prefix, `flags` in the first byte's other bits. */
export function writeInt(
  buf: Uint8Array,
  at: number,
  v: number,
  prefix: number,
  flags: number,
): number {
  const mask = (1 << prefix) - 1;
  if (v < mask) {
    buf[at] = flags | v;
    return at + 1;
  }
  buf[at++] = flags | mask;
  v -= mask;
  while (v >= 128) {
    buf[at++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[at] = v;
  return at + 1;
}

/** Whether `s` goes shorter Huffman-coded, and its coded length either way. */
export function stringPlan(s: string): { huffman: boolean; len: number } {
  const h = huffmanLength(s);
  return h < s.length ? { huffman: true, len: h } : { huffman: false, len: s.length };
}

/** Bytes of a string literal with an N-bit length prefix (shortest coding). */
export function stringSize(s: string, prefix: number): number {
  const { len } = stringPlan(s);
  return intSize(len, prefix) + len;
}

/**
 * Writes a string literal with an N-bit length prefix, Huffman-coded when shorter; `flags`
 * are the first byte's bits above the H bit.
 */
export function writeString(
  buf: Uint8Array,
  at: number,
  s: string,
  prefix: number,
  flags: number,
): number {
  const { huffman, len } = stringPlan(s);
  at = writeInt(buf, at, len, prefix, flags | (huffman ? 1 << prefix : 0));
  if (huffman) return huffmanEncode(s, buf, at);
  for (let i = 0; i < s.length; i++) buf[at++] = s.charCodeAt(i) & 0xff;
  return at;
}
