/**
 * Time-based one-time passwords (TOTP, RFC 6238) over HOTP (RFC 4226), the codes of
 * authenticator apps: pure Web Crypto. A code is the HMAC of the number of `period`s since
 * the epoch under a shared secret, truncated to `digits` decimal digits. The defaults are what
 * every authenticator app reads from an `otpauth://` URI without parameters: SHA-1, 30 s,
 * 6 digits.
 *
 * @module
 */
import { AuthError } from "./_errors.ts";
import { randomBytes, timingSafeEqualText } from "./_encoding.ts";

/** HMAC hash of a TOTP (authenticator apps read SHA-1; RFC 6238 allows the other two). */
export type TotpAlgorithm = "SHA-1" | "SHA-256" | "SHA-512";

/** Parameters of a TOTP; every field has the authenticator apps' default. */
export interface TotpOptions {
  /** HMAC hash; default `SHA-1`. */
  algorithm?: TotpAlgorithm;
  /** Digits of a code, 6 to 8; default 6. */
  digits?: number;
  /** Length of a time step in seconds, 1 to 300; default 30. */
  period?: number;
}

/** Options of {@linkcode verifyTotp}. */
export interface VerifyTotpOptions extends TotpOptions {
  /** Steps accepted on each side of the current one (clock drift), 0 to 10; default 1. */
  window?: number;
  /** The current time in milliseconds since the epoch; default `Date.now()`. */
  now?: number;
}

/** Bytes of a new secret: 160 bits, the HMAC-SHA-1 key length RFC 4226 recommends. */
export const TOTP_SECRET_BYTES = 20;

const ALGORITHMS: readonly TotpAlgorithm[] = ["SHA-1", "SHA-256", "SHA-512"];
const B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function settled(o: TotpOptions | undefined): Required<TotpOptions> {
  const algorithm = o?.algorithm ?? "SHA-1";
  const digits = o?.digits ?? 6;
  const period = o?.period ?? 30;
  if (!ALGORITHMS.includes(algorithm)) {
    throw new AuthError("invalid_options", "algorithm must be SHA-1, SHA-256 or SHA-512");
  }
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) {
    throw new AuthError("invalid_options", "digits must be 6, 7 or 8");
  }
  if (!Number.isInteger(period) || period < 1 || period > 300) {
    throw new AuthError("invalid_options", "period must be 1 to 300 seconds");
  }
  return { algorithm, digits, period };
}

function secretBytes(secret: Uint8Array): Uint8Array<ArrayBuffer> {
  if (!(secret instanceof Uint8Array) || secret.length < 10 || secret.length > 128) {
    throw new AuthError("invalid_secret", "a TOTP secret is 10 to 128 bytes");
  }
  return new Uint8Array(secret);
}

/**
 * A new random secret of {@linkcode TOTP_SECRET_BYTES} bytes.
 *
 * @example
 * ```ts
 * import { base32Encode, generateTotpSecret } from "@gatehouse/gatehouse";
 * console.log(base32Encode(generateTotpSecret()).length); // 32
 * ```
 */
export function generateTotpSecret(): Uint8Array<ArrayBuffer> {
  return randomBytes(TOTP_SECRET_BYTES);
}

/**
 * RFC 4648 base32 without padding, the form of secrets in `otpauth://` URIs.
 *
 * @example
 * ```ts
 * import { base32Encode } from "@gatehouse/gatehouse";
 * console.log(base32Encode(new TextEncoder().encode("foobar"))); // "MZXW6YTBOI"
 * ```
 */
export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

/**
 * Decodes base32 as people type it from an authenticator's screen: case, spaces, dashes and
 * `=` padding are ignored. `null` for any other character or a dangling group.
 *
 * @example
 * ```ts
 * import { base32Decode } from "@gatehouse/gatehouse";
 * console.log(new TextDecoder().decode(base32Decode("mzxw 6ytb oi")!)); // "foobar"
 * ```
 */
export function base32Decode(text: string): Uint8Array<ArrayBuffer> | null {
  if (typeof text !== "string" || text.length > 1024) return null;
  const clean = text.replace(/[\s-]+/g, "").replace(/=+$/, "").toUpperCase();
  if ([1, 3, 6].includes(clean.length % 8)) return null;
  const out = new Uint8Array(Math.floor((clean.length * 5) / 8));
  let bits = 0;
  let value = 0;
  let o = 0;
  for (const c of clean) {
    const v = B32.indexOf(c);
    if (v < 0) return null;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out[o++] = (value >>> (bits - 8)) & 255;
      bits -= 8;
    }
  }
  return out;
}

/**
 * The HOTP value (RFC 4226) of `counter` under `secret`, as `digits` decimal digits.
 *
 * @example
 * ```ts
 * import { hotp } from "@gatehouse/gatehouse";
 * const secret = new TextEncoder().encode("12345678901234567890");
 * console.log(await hotp(secret, 0)); // "755224" (RFC 4226, appendix D)
 * ```
 */
export async function hotp(
  secret: Uint8Array,
  counter: number,
  options?: TotpOptions,
): Promise<string> {
  const { algorithm, digits } = settled(options);
  if (!Number.isSafeInteger(counter) || counter < 0) {
    throw new AuthError("invalid_options", "counter must be a non-negative safe integer");
  }
  return hotpWith(await hmacKey(secret, algorithm), counter, digits);
}

function hmacKey(secret: Uint8Array, algorithm: TotpAlgorithm): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    secretBytes(secret),
    { name: "HMAC", hash: algorithm },
    false,
    ["sign"],
  );
}

async function hotpWith(key: CryptoKey, counter: number, digits: number): Promise<string> {
  const message = new Uint8Array(8);
  new DataView(message.buffer).setBigUint64(0, BigInt(counter));
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, message));
  const offset = mac[mac.length - 1] & 15;
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) |
    (mac[offset + 2] << 8) | mac[offset + 3];
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** The time step of `now` (ms since the epoch) for a period in seconds. */
export function totpStep(now: number, period = 30): number {
  return Math.floor(Math.floor(now / 1000) / period);
}

/**
 * The TOTP code (RFC 6238) of `secret` at `now` (ms since the epoch; default the current
 * time).
 *
 * @example
 * ```ts
 * import { totp } from "@gatehouse/gatehouse";
 * const secret = new TextEncoder().encode("12345678901234567890");
 * console.log(await totp(secret, { now: 59_000, digits: 8 })); // "94287082" (RFC 6238)
 * ```
 */
export async function totp(
  secret: Uint8Array,
  options?: TotpOptions & { now?: number },
): Promise<string> {
  const { period } = settled(options);
  return await hotp(secret, totpStep(options?.now ?? Date.now(), period), options);
}

/**
 * Checks a code typed by a person against `secret`: the current step and `window` steps on
 * each side (default 1: about ±30 s). Resolves to the matching time step, which the caller
 * stores so the same code (or an older one) is never accepted twice, or `null`. Spaces in
 * the code are ignored; anything that is not `digits` digits is `null`. Every step of the
 * window is computed and compared in constant time, whatever matches. Never throws for a bad
 * code (only for bad options or secret).
 *
 * @example
 * ```ts
 * import { totp, verifyTotp } from "@gatehouse/gatehouse";
 * const secret = new TextEncoder().encode("12345678901234567890");
 * const now = Date.UTC(2026, 0, 1);
 * const code = await totp(secret, { now: now - 30_000 }); // the previous step's code
 * console.log(await verifyTotp(secret, code, { now })); // 59184000
 * ```
 */
export async function verifyTotp(
  secret: Uint8Array,
  code: string,
  options?: VerifyTotpOptions,
): Promise<number | null> {
  const o = settled(options);
  const window = options?.window ?? 1;
  if (!Number.isInteger(window) || window < 0 || window > 10) {
    throw new AuthError("invalid_options", "window must be 0 to 10 steps");
  }
  const now = options?.now ?? Date.now();
  secretBytes(secret);
  const typed = typeof code === "string" ? code.replace(/\s+/g, "") : "";
  const wellFormed = typed.length === o.digits && /^[0-9]+$/.test(typed);
  const current = totpStep(now, o.period);
  const key = await hmacKey(secret, o.algorithm);
  let found: number | null = null;
  for (let d = -window; d <= window; d++) {
    const step = current + d;
    if (step < 0) continue;
    const expected = await hotpWith(key, step, o.digits);
    if (timingSafeEqualText(expected, wellFormed ? typed : "x".repeat(o.digits)) && wellFormed) {
      found = found ?? step;
    }
  }
  return found;
}

/** What {@linkcode totpUri} puts in an `otpauth://` URI. */
export interface TotpUriOptions extends TotpOptions {
  /** The shared secret. */
  secret: Uint8Array;
  /** The account, shown under the issuer in the app (an e-mail address). */
  account: string;
  /** The site's name, shown in the app. */
  issuer: string;
}

/**
 * The `otpauth://totp/` URI an authenticator app reads from a QR code (Key Uri Format):
 * `otpauth://totp/<issuer>:<account>?secret=<base32>&issuer=<issuer>`, plus `algorithm`,
 * `digits` and `period` when they are not the defaults.
 *
 * @example
 * ```ts
 * import { totpUri } from "@gatehouse/gatehouse";
 * const secret = new TextEncoder().encode("12345678901234567890");
 * console.log(totpUri({ secret, account: "ada@example.com", issuer: "Example" }));
 * // otpauth://totp/Example:ada%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=Example
 * ```
 */
export function totpUri(o: TotpUriOptions): string {
  const { algorithm, digits, period } = settled(o);
  if (typeof o.account !== "string" || o.account.length === 0 || o.account.length > 320) {
    throw new AuthError("invalid_options", "account must be 1 to 320 characters");
  }
  if (
    typeof o.issuer !== "string" || o.issuer.length === 0 || o.issuer.length > 200 ||
    o.issuer.includes(":")
  ) {
    throw new AuthError("invalid_options", "issuer must be 1 to 200 characters without ':'");
  }
  const label = `${encodeURIComponent(o.issuer)}:${encodeURIComponent(o.account)}`;
  let query = `secret=${base32Encode(secretBytes(o.secret))}&issuer=${
    encodeURIComponent(o.issuer)
  }`;
  if (algorithm !== "SHA-1") query += `&algorithm=${algorithm.replace("-", "")}`;
  if (digits !== 6) query += `&digits=${digits}`;
  if (period !== 30) query += `&period=${period}`;
  return `otpauth://totp/${label}?${query}`;
}
