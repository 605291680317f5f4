/**
 * An authenticator app for the tests, written apart from the code under test: RFC 6238 codes
 * with `node:crypto`'s HMAC-SHA-1 and a base32 decoder of its own.
 */
import { createHmac } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function fromBase32(text: string): Uint8Array {
  const bits = [...text.toUpperCase().replace(/=+$/, "")]
    .map((c) => {
      const v = ALPHABET.indexOf(c);
      if (v < 0) throw new Error(`not base32: ${c}`);
      return v.toString(2).padStart(5, "0");
    })
    .join("");
  const out = new Uint8Array(Math.floor(bits.length / 8));
  for (let i = 0; i < out.length; i++) out[i] = parseInt(bits.slice(i * 8, i * 8 + 8), 2);
  return out;
}

/**
 * The code an authenticator app shows at `ms` for a base32 key: 6 digits, or `digits` (8 for
 * the test vectors of RFC 6238).
 */
export function appCode(base32Key: string, ms: number, digits = 6): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 1000 / 30)));
  const mac = createHmac("sha1", fromBase32(base32Key)).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  const value = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(value).padStart(digits, "0");
}

/** The key of an `otpauth://` URI. */
export function keyOfUri(uri: string): string {
  const key = new URL(uri).searchParams.get("secret");
  if (!key) throw new Error(`no secret in ${uri}`);
  return key;
}
