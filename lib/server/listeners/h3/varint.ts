/**
 * QUIC variable-length integers (RFC 9000 §16), the unit of every HTTP/3 frame and stream
 * header: the two top bits of the first byte give the length (1, 2, 4 or 8 bytes), the rest is
 * the value, big-endian, up to 2^62 - 1.
 *
 * Values are JavaScript numbers: exact up to 2^53 - 1, which covers every length, stream id
 * and setting value HTTP/3 can use here; an 8-byte value above that (a reserved frame or
 * setting type chosen at random, RFC 9114 §7.2.8) comes out rounded, which only ever matters
 * for types this code does not know and skips anyway.
 *
 * @module
 */

/** Largest value a varint holds (2^62 - 1, rounded to the nearest double). */
export const MAX_VARINT = 2 ** 62 - 1;

/** The number of bytes `v` takes as a varint. */
export function varintSize(v: number): 1 | 2 | 4 | 8 {
  return v < 0x40 ? 1 : v < 0x4000 ? 2 : v < 0x40000000 ? 4 : 8;
}

/**
 * Writes `v` (an integer in 0..2^62-1) at `at`; returns the offset after it. The caller sized
 * `buf` with `varintSize`.
 *
 * @example
 * ```ts
 * import { writeVarint } from "./varint.ts";
 * const buf = new Uint8Array(2);
 * writeVarint(buf, 0, 494); // 2; buf is 41 ee
 * ```
 */
export function writeVarint(buf: Uint8Array, at: number, v: number): number {
  if (v < 0x40) {
    buf[at] = v;
    return at + 1;
  }
  if (v < 0x4000) {
    buf[at] = 0x40 | (v >>> 8);
    buf[at + 1] = v & 0xff;
    return at + 2;
  }
  if (v < 0x40000000) {
    buf[at] = 0x80 | (v >>> 24);
    buf[at + 1] = (v >>> 16) & 0xff;
    buf[at + 2] = (v >>> 8) & 0xff;
    buf[at + 3] = v & 0xff;
    return at + 4;
  }
  if (!(v <= MAX_VARINT) || v < 0 || !Number.isInteger(v)) {
    throw new RangeError(`not a QUIC varint value: ${v}`);
  }
  const hi = Math.floor(v / 0x100000000);
  const lo = v - hi * 0x100000000;
  buf[at] = 0xc0 | (hi >>> 24);
  buf[at + 1] = (hi >>> 16) & 0xff;
  buf[at + 2] = (hi >>> 8) & 0xff;
  buf[at + 3] = hi & 0xff;
  buf[at + 4] = lo >>> 24;
  buf[at + 5] = (lo >>> 16) & 0xff;
  buf[at + 6] = (lo >>> 8) & 0xff;
  buf[at + 7] = lo & 0xff;
  return at + 8;
}

/** `v` as a varint of its own. */
export function encodeVarint(v: number): Uint8Array {
  const out = new Uint8Array(varintSize(v));
  writeVarint(out, 0, v);
  return out;
}

/**
 * A read position over bytes: `varint()` reads one integer or says that the bytes end first,
 * so a parser can stop and wait for more without having consumed anything.
 *
 * @example
 * ```ts
 * import { Cursor } from "./varint.ts";
 * const c = new Cursor(new Uint8Array([0x40, 0x25, 0x07]));
 * c.varint(); // 37
 * c.varint(); // 7
 * c.varint(); // -1: no more bytes
 * ```
 */
export class Cursor {
  /** The next byte to read. */
  pos: number;
  /** One past the last readable byte. */
  end: number;
  constructor(readonly buf: Uint8Array, pos = 0, end = buf.length) {
    this.pos = pos;
    this.end = end;
  }
  /** Bytes left. */
  get left(): number {
    return this.end - this.pos;
  }
  /** The next varint, or -1 (position unchanged) when the bytes end inside it. */
  varint(): number {
    const p = this.pos;
    if (p >= this.end) return -1;
    const b = this.buf;
    const first = b[p];
    const kind = first >> 6;
    if (kind === 0) {
      this.pos = p + 1;
      return first;
    }
    if (kind === 1) {
      if (p + 2 > this.end) return -1;
      this.pos = p + 2;
      return ((first & 0x3f) << 8) | b[p + 1];
    }
    if (kind === 2) {
      if (p + 4 > this.end) return -1;
      this.pos = p + 4;
      return (first & 0x3f) * 0x1000000 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
    }
    if (p + 8 > this.end) return -1;
    this.pos = p + 8;
    const hi = (first & 0x3f) * 0x1000000 + ((b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3]);
    const lo = ((b[p + 4] << 24) >>> 0) + ((b[p + 5] << 16) | (b[p + 6] << 8) | b[p + 7]);
    return hi * 0x100000000 + lo;
  }
}
