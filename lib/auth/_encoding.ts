/**
 * Byte/text encodings shared by the core: base64 (PHC style, no padding), base64url (no
 * padding), strict decoders that return `null` for anything non-canonical, and a
 * constant-time comparison.
 *
 * @module
 */

const STD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

function table(alphabet: string): Int16Array {
  const t = new Int16Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
}
const STD_T = table(STD);
const URL_T = table(URL_SAFE);

function encode(bytes: Uint8Array, alphabet: string): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + alphabet[(n >> 6) & 63] +
      alphabet[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63];
  } else if (rest === 2) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8);
    out += alphabet[n >> 18] + alphabet[(n >> 12) & 63] + alphabet[(n >> 6) & 63];
  }
  return out;
}

function decode(text: string, t: Int16Array): Uint8Array<ArrayBuffer> | null {
  const len = text.length;
  if (len % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((len * 3) / 4));
  let o = 0;
  let i = 0;
  for (; i + 3 < len; i += 4) {
    const a = sym(text, i, t), b = sym(text, i + 1, t), c = sym(text, i + 2, t);
    const d = sym(text, i + 3, t);
    if ((a | b | c | d) < 0) return null;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 255;
    out[o++] = n & 255;
  }
  const rest = len - i;
  if (rest === 2) {
    const a = sym(text, i, t), b = sym(text, i + 1, t);
    if ((a | b) < 0 || (b & 15) !== 0) return null; // non-canonical trailing bits
    out[o++] = (a << 2) | (b >> 4);
  } else if (rest === 3) {
    const a = sym(text, i, t), b = sym(text, i + 1, t), c = sym(text, i + 2, t);
    if ((a | b | c) < 0 || (c & 3) !== 0) return null;
    const n = (a << 18) | (b << 12) | (c << 6);
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 255;
  }
  return out;
}

function sym(text: string, i: number, t: Int16Array): number {
  const c = text.charCodeAt(i);
  return c < 128 ? t[c] : -1;
}

/** Standard base64 without padding (the PHC string format's encoding). */
export function b64encode(bytes: Uint8Array): string {
  return encode(bytes, STD);
}

/** Decodes unpadded standard base64; `null` when invalid or non-canonical. */
export function b64decode(text: string): Uint8Array<ArrayBuffer> | null {
  return decode(text, STD_T);
}

/** base64url without padding. */
export function b64urlEncode(bytes: Uint8Array): string {
  return encode(bytes, URL_SAFE);
}

/** Decodes unpadded base64url; `null` when invalid or non-canonical. */
export function b64urlDecode(text: string): Uint8Array<ArrayBuffer> | null {
  return decode(text, URL_T);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text);
}

/** Text of UTF-8 bytes; `null` for invalid UTF-8. */
export function fromUtf8(bytes: Uint8Array): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** `n` cryptographically random bytes. */
export function randomBytes(n: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(n));
}

/**
 * Compares two byte strings in time that depends only on their lengths (never on where they
 * differ).
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** Constant-time comparison of two strings (by their UTF-8 bytes). */
export function timingSafeEqualText(a: string, b: string): boolean {
  return timingSafeEqual(utf8(a), utf8(b));
}
