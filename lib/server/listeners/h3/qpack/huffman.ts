/**
 * The Huffman code of HPACK string literals (RFC 7541 Appendix B), which QPACK uses unchanged
 * (RFC 9204 §4.1.2). The code is canonical: a symbol's code follows from the code lengths
 * alone (codes of one length are consecutive, in symbol order, after all shorter ones), so the
 * RFC's table is kept here as its 257 lengths and the codes are derived from them.
 *
 * Decoding runs a state machine built once from the code: one state per inner node of the
 * code tree, four bits per step, at most one symbol out per step (the shortest code is five
 * bits). A string is refused when it holds the EOS symbol, or ends in padding that is longer
 * than seven bits or not a prefix of EOS (all ones) (RFC 7541 §5.2).
 *
 * @module
 */

/** Code length in bits of each symbol (0 to 255, then EOS as 256), from RFC 7541 Appendix B. */
// deno-fmt-ignore
const LENGTHS: readonly number[] = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
  28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
  6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
  5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
  13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
  15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
  6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
  20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
  24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
  22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
  21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
  26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
  19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
  20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
  26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
  30,
];

/** The end-of-string symbol. */
const EOS = 256;

/** Each symbol's code, right-aligned (derived from LENGTHS: canonical Huffman). */
const CODES: readonly number[] = (() => {
  const order = LENGTHS.map((_, s) => s).sort((a, b) => LENGTHS[a] - LENGTHS[b] || a - b);
  const codes = new Array<number>(LENGTHS.length);
  let code = 0;
  let len = LENGTHS[order[0]];
  for (let i = 0; i < order.length; i++) {
    const s = order[i];
    if (i > 0) code = (code + 1) * 2 ** (LENGTHS[s] - len);
    len = LENGTHS[s];
    codes[s] = code;
  }
  return codes;
})();

/** The code of `symbol` as `[code, length]` (tests check it against the RFC's table). */
export function huffmanCode(symbol: number): [number, number] {
  return [CODES[symbol], LENGTHS[symbol]];
}

const FAIL = 1 << 17;
/** Per state and nibble: next state (bits 0-7), symbol + 1 (bits 8-16, 0 for none), FAIL. */
const STEP = new Uint32Array(256 * 16);
/** States where the input may end: the root, or up to seven 1 bits into the tree. */
const ACCEPT = new Uint8Array(256);

(() => {
  // the code tree: inner nodes are numbered from 0 (the root); children >= 0 are inner nodes,
  // -(symbol + 1) are leaves
  const left: number[] = [-0x10000];
  const right: number[] = [-0x10000];
  const depth: number[] = [0];
  const ones: boolean[] = [true];
  for (let s = 0; s < LENGTHS.length; s++) {
    let node = 0;
    for (let b = LENGTHS[s] - 1; b >= 0; b--) {
      const bit = Math.floor(CODES[s] / 2 ** b) & 1;
      const side = bit ? right : left;
      if (b === 0) {
        side[node] = -(s + 1);
        break;
      }
      if (side[node] < 0 && side[node] !== -0x10000) throw new Error("huffman: not a prefix code");
      if (side[node] === -0x10000) {
        const inner = left.length;
        left.push(-0x10000);
        right.push(-0x10000);
        depth.push(depth[node] + 1);
        ones.push(ones[node] && bit === 1);
        side[node] = inner;
      }
      node = side[node];
    }
  }
  if (left.length !== 256) throw new Error("huffman: the code tree is not complete");
  for (let state = 0; state < 256; state++) {
    ACCEPT[state] = state === 0 || (ones[state] && depth[state] <= 7) ? 1 : 0;
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = state;
      let emitted = 0;
      let fail = 0;
      for (let b = 3; b >= 0; b--) {
        const next = (nibble >> b) & 1 ? right[node] : left[node];
        if (next < 0) {
          const symbol = -next - 1;
          if (symbol === EOS) fail = FAIL;
          emitted = symbol + 1;
          node = 0;
        } else node = next;
      }
      STEP[(state << 4) | nibble] = fail | (fail ? 0 : emitted << 8) | node;
    }
  }
})();

/**
 * Decodes `len` Huffman-coded bytes of `src` from `at` into a string (one character per
 * byte), or returns null when they are not a valid encoding.
 *
 * @example
 * ```ts
 * import { huffmanDecode } from "./huffman.ts";
 * // RFC 7541 C.4.1: "www.example.com"
 * const bytes = new Uint8Array([0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff]);
 * huffmanDecode(bytes, 0, bytes.length); // "www.example.com"
 * ```
 */
export function huffmanDecode(src: Uint8Array, at: number, len: number): string | null {
  const need = Math.ceil((len * 8) / 5);
  if (scratch.length < need) scratch = new Uint8Array(Math.max(need, scratch.length * 2));
  const out = scratch;
  let n = 0;
  let state = 0;
  const end = at + len;
  for (let i = at; i < end; i++) {
    const byte = src[i];
    let e = STEP[(state << 4) | (byte >> 4)];
    if (e & FAIL) return null;
    let sym = (e >> 8) & 0x1ff;
    if (sym !== 0) out[n++] = sym - 1;
    state = e & 0xff;
    e = STEP[(state << 4) | (byte & 0xf)];
    if (e & FAIL) return null;
    sym = (e >> 8) & 0x1ff;
    if (sym !== 0) out[n++] = sym - 1;
    state = e & 0xff;
  }
  if (!ACCEPT[state]) return null;
  return latin1(out, 0, n);
}

/** The decoder's output buffer, reused from call to call (the result is a string). */
let scratch = new Uint8Array(1024);

/** Bytes as a string of one character per byte. */
export function latin1(bytes: Uint8Array, at: number, len: number): string {
  if (len <= 64) {
    let s = "";
    for (let i = at; i < at + len; i++) s += String.fromCharCode(bytes[i]);
    return s;
  }
  let s = "";
  for (let i = at; i < at + len; i += 4096) {
    s += String.fromCharCode.apply(
      null,
      bytes.subarray(i, Math.min(at + len, i + 4096)) as unknown as number[],
    );
  }
  return s;
}

/** The bytes the Huffman coding of `s` (one byte per character) takes. */
export function huffmanLength(s: string): number {
  let bits = 0;
  for (let i = 0; i < s.length; i++) bits += LENGTHS[s.charCodeAt(i) & 0xff];
  return Math.ceil(bits / 8);
}

/**
 * Writes the Huffman coding of `s` at `at` (padded with ones); returns the offset after it.
 * `dst` has room for `huffmanLength(s)` bytes there.
 */
export function huffmanEncode(s: string, dst: Uint8Array, at: number): number {
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) & 0xff;
    const len = LENGTHS[c];
    acc = acc * 2 ** len + CODES[c];
    bits += len;
    while (bits >= 8) {
      bits -= 8;
      const scale = 2 ** bits;
      const byte = Math.floor(acc / scale);
      dst[at++] = byte;
      acc -= byte * scale;
    }
  }
  if (bits > 0) dst[at++] = (acc << (8 - bits)) | (0xff >> bits);
  return at;
}
