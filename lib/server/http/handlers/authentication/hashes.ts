/**
 * Password hashes of `http_basic` accounts and of `gatehouse hash-password`, as Caddy's
 * `http.authentication.hashes.*` modules: `bcrypt` (cost 14; the default) and `scrypt`
 * (deprecated in Caddy, kept for configs that use it; N=32768, r=8, p=1, 32-byte keys unless
 * the config says otherwise). Both libraries load on first use.
 *
 * @module
 */

/** scrypt parameters (Caddy's field names). */
export interface ScryptParams {
  /** CPU/memory cost, a power of two (default 32768). */
  N: number;
  /** Block size (default 8). */
  r: number;
  /** Parallelism (default 1). */
  p: number;
  /** Key length in bytes (default 32). */
  key_length: number;
}

/** Caddy's scrypt defaults. */
export const SCRYPT_DEFAULTS: Readonly<ScryptParams> = { N: 32768, r: 8, p: 1, key_length: 32 };

/** bcrypt cost of new hashes (as Caddy). */
export const BCRYPT_COST = 14;

/**
 * A bcrypt hash of `plaintext` in Modular Crypt Format (`$2b$14$...`), what
 * `caddy hash-password` prints.
 *
 * @example
 * ```ts ignore
 * import { bcryptHash } from "./hashes.ts";
 * const hash = await bcryptHash("hunter2"); // "$2b$14$..."
 * ```
 */
export async function bcryptHash(plaintext: string, cost: number = BCRYPT_COST): Promise<string> {
  const bcrypt = (await import("bcryptjs")).default;
  return await bcrypt.hash(plaintext, cost);
}

/**
 * The scrypt key of `plaintext` with `salt` (raw bytes), as Caddy's `ScryptHash.Hash`.
 *
 * @example
 * ```ts ignore
 * import { scryptKey, SCRYPT_DEFAULTS } from "./hashes.ts";
 * const key = await scryptKey("hunter2", new TextEncoder().encode("salt"), SCRYPT_DEFAULTS);
 * ```
 */
export async function scryptKey(
  plaintext: string,
  salt: Uint8Array,
  params: ScryptParams,
): Promise<Uint8Array> {
  const { scrypt } = await import("node:crypto");
  // scrypt needs 128 * N * r bytes; allow that plus room (Node's default cap is 32 MiB)
  const maxmem = 128 * params.N * params.r * 2 + 1024 * 1024;
  return await new Promise<Uint8Array>((resolve, reject) =>
    scrypt(
      new TextEncoder().encode(plaintext),
      salt,
      params.key_length,
      { N: params.N, r: params.r, p: params.p, maxmem },
      (err, key) => err ? reject(err) : resolve(new Uint8Array(key)),
    )
  );
}

/**
 * Compares two byte strings in time that depends only on their lengths.
 *
 * @example
 * ```ts
 * import { constantTimeEqual } from "./hashes.ts";
 * constantTimeEqual(new Uint8Array([1]), new Uint8Array([1])); // true
 * ```
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/**
 * Base64 (standard alphabet, padded) of bytes.
 *
 * @example
 * ```ts
 * import { toBase64 } from "./hashes.ts";
 * toBase64(new TextEncoder().encode("salt")); // "c2FsdA=="
 * ```
 */
export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/**
 * Decodes standard base64; null when malformed.
 *
 * @example
 * ```ts
 * import { fromBase64 } from "./hashes.ts";
 * fromBase64("c2FsdA=="); // Uint8Array of "salt"
 * ```
 */
export function fromBase64(text: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
