/**
 * Password hashing: PBKDF2-HMAC-SHA256 split into chained calls of at most 100,000 iterations
 * each, so that the default (600,000 iterations in total, OWASP's figure for PBKDF2-HMAC-SHA256)
 * runs unchanged on Cloudflare Workers, which refuses any single PBKDF2 call above 100,000.
 *
 * Construction, for total iterations `i`, per-call cap `c`, password `P` (Unicode NFC, UTF-8),
 * random 16-byte salt `S`, and `n = ceil(i / c)` segments:
 *
 * ```text
 * T1 = PBKDF2-HMAC-SHA256(P, S,    min(c, i),            32 bytes)
 * Tk = PBKDF2-HMAC-SHA256(P, Tk-1, min(c, i - (k-1)*c), 32 bytes)   for k = 2..n
 * hash = Tn
 * ```
 *
 * Every segment keys HMAC with the password and salts with the previous segment's output, so
 * the segments must be computed in order and each costs its full iteration count: the whole
 * costs `i` HMAC-SHA256 iterations for the defender and for an attacker alike. With `i <= c`
 * it is plain PBKDF2.
 *
 * Stored format (PHC string style, base64 without padding):
 * `$pbkdf2-sha256$i=600000,c=100000$<salt>$<hash>`.
 *
 * @module
 */
import { AuthError } from "./_errors.ts";
import { b64decode, b64encode, randomBytes, timingSafeEqual, utf8 } from "./_encoding.ts";

/** Default total PBKDF2-HMAC-SHA256 iterations (OWASP 2023 guidance). */
export const DEFAULT_PASSWORD_ITERATIONS = 600_000;
/** Largest iteration count of any single PBKDF2 call (Cloudflare Workers' limit). */
export const MAX_ITERATIONS_PER_CALL = 100_000;
/** Largest total iteration count accepted for hashing or verifying (bounds the work). */
export const MAX_PASSWORD_ITERATIONS = 2_000_000;

const ID = "pbkdf2-sha256";
const SALT_BYTES = 16;
const HASH_BYTES = 32;

/** Options of {@linkcode hashPassword} and {@linkcode needsRehash}. */
export interface PasswordOptions {
  /**
   * Total PBKDF2-HMAC-SHA256 iterations, an integer from 1 to 2,000,000. Default 600,000,
   * computed as chained calls of at most 100,000 each.
   */
  iterations?: number;
}

interface Parsed {
  iterations: number;
  perCall: number;
  salt: Uint8Array<ArrayBuffer>;
  hash: Uint8Array;
}

function targetIterations(options?: PasswordOptions): number {
  const i = options?.iterations ?? DEFAULT_PASSWORD_ITERATIONS;
  if (!Number.isSafeInteger(i) || i < 1 || i > MAX_PASSWORD_ITERATIONS) {
    throw new AuthError(
      "invalid_options",
      `iterations must be an integer from 1 to ${MAX_PASSWORD_ITERATIONS}`,
    );
  }
  return i;
}

async function derive(
  password: string,
  salt: Uint8Array<ArrayBuffer>,
  iterations: number,
  perCall: number,
): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "raw",
    utf8(password.normalize("NFC")),
    "PBKDF2",
    false,
    ["deriveBits"],
  );
  let block: Uint8Array<ArrayBuffer> = salt;
  for (let done = 0; done < iterations; done += perCall) {
    const bits = await crypto.subtle.deriveBits(
      {
        name: "PBKDF2",
        hash: "SHA-256",
        salt: block,
        iterations: Math.min(perCall, iterations - done),
      },
      key,
      HASH_BYTES * 8,
    );
    block = new Uint8Array(bits);
  }
  return block;
}

const DIGITS = /^[1-9][0-9]{0,8}$/;

function parse(stored: string): Parsed | null {
  if (typeof stored !== "string" || stored.length > 512) return null;
  const parts = stored.split("$");
  // ["", id, params, salt, hash]
  if (parts.length !== 5 || parts[0] !== "" || parts[1] !== ID) return null;
  const params = parts[2].split(",");
  if (params.length !== 2 || !params[0].startsWith("i=") || !params[1].startsWith("c=")) {
    return null;
  }
  const i = params[0].slice(2), c = params[1].slice(2);
  if (!DIGITS.test(i) || !DIGITS.test(c)) return null;
  const iterations = Number(i), perCall = Number(c);
  if (iterations > MAX_PASSWORD_ITERATIONS || perCall > MAX_ITERATIONS_PER_CALL) return null;
  const salt = b64decode(parts[3]);
  const hash = b64decode(parts[4]);
  if (!salt || salt.length < 8 || salt.length > 64 || !hash || hash.length !== HASH_BYTES) {
    return null;
  }
  return { iterations, perCall, salt, hash };
}

/**
 * Hashes a password with a random 16-byte salt into a self-describing string
 * (`$pbkdf2-sha256$i=<total>,c=<per call>$<salt>$<hash>`). Throws
 * {@linkcode AuthError} `invalid_options` for an empty password or out-of-range iterations.
 *
 * @example
 * ```ts
 * import { hashPassword, verifyPassword } from "@gatehouse/gatehouse";
 * const stored = await hashPassword("correct horse battery staple");
 * console.log(await verifyPassword("correct horse battery staple", stored)); // true
 * ```
 */
export async function hashPassword(password: string, options?: PasswordOptions): Promise<string> {
  if (typeof password !== "string" || password.length === 0) {
    throw new AuthError("invalid_options", "password must be a non-empty string");
  }
  const iterations = targetIterations(options);
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(password, salt, iterations, MAX_ITERATIONS_PER_CALL);
  return `$${ID}$i=${iterations},c=${MAX_ITERATIONS_PER_CALL}$${b64encode(salt)}$${
    b64encode(hash)
  }`;
}

/**
 * Checks a password against a stored {@linkcode hashPassword} string. Never throws: a wrong
 * password, an empty password, and a stored value that is garbage, truncated, or has
 * parameters beyond this library's limits (more than 100,000 iterations per call, more than
 * 2,000,000 in total) all give `false`. The final comparison is constant-time.
 *
 * @example
 * ```ts
 * import { verifyPassword } from "@gatehouse/gatehouse";
 * console.log(await verifyPassword("guess", "not a hash")); // false
 * ```
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  try {
    if (typeof password !== "string" || password.length === 0) return false;
    const parsed = parse(stored);
    if (!parsed) return false;
    const hash = await derive(password, parsed.salt, parsed.iterations, parsed.perCall);
    return timingSafeEqual(hash, parsed.hash);
  } catch {
    return false;
  }
}

/**
 * Whether a stored hash should be replaced by a fresh {@linkcode hashPassword} result (after
 * a successful {@linkcode verifyPassword}): true when it is unreadable or its parameters
 * differ from the wanted ones (iterations, per-call split, salt length). Throws
 * {@linkcode AuthError} `invalid_options` for out-of-range `iterations`.
 *
 * @example
 * ```ts
 * import { hashPassword, needsRehash } from "@gatehouse/gatehouse";
 * const old = await hashPassword("pw", { iterations: 100_000 });
 * console.log(needsRehash(old)); // true: the default is 600,000
 * ```
 */
export function needsRehash(stored: string, options?: PasswordOptions): boolean {
  const iterations = targetIterations(options);
  const parsed = parse(stored);
  if (!parsed) return true;
  return parsed.iterations !== iterations || parsed.perCall !== MAX_ITERATIONS_PER_CALL ||
    parsed.salt.length !== SALT_BYTES;
}
