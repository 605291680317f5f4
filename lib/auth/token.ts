/**
 * Compact purpose-bound HMAC-SHA256 tokens: `<body>.<signature>`, both base64url, where the
 * body is the JSON array `[iat, exp, payload]` (seconds since the epoch) and the signature is
 * HMAC-SHA256 over `gatehouse.v1:<purpose>:<body>`. The purpose is signed but not carried, so
 * a token made for one purpose never verifies for another. Secrets rotate: sign with the first
 * of a list, verify with any. Imported keys are cached per secret.
 *
 * @module
 */
import { AuthError } from "./_errors.ts";
import { b64urlDecode, b64urlEncode, fromUtf8, utf8 } from "./_encoding.ts";

/** One secret, or a list for rotation: the first signs, any of them verifies. */
export type Secrets = string | readonly string[];

/** What {@linkcode verifyToken} returns for a valid token. */
export interface TokenClaims<T> {
  /** The signed payload. */
  payload: T;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expires at, seconds since the epoch (the token is invalid from this second on). */
  exp: number;
}

/** Options of {@linkcode signToken}. */
export interface SignTokenOptions<T> {
  /** What the token is for (`session`, `reset`, ...); a token verifies only for its purpose. */
  purpose: string;
  /** JSON-serializable payload. */
  payload: T;
  /** Lifetime in whole seconds (a positive integer). */
  ttlSeconds: number;
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

/** Options of {@linkcode verifyToken}. */
export interface VerifyTokenOptions {
  /** The purpose the token must have been signed for. */
  purpose: string;
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

const MAX_TOKEN_LENGTH = 8192;
const MAX_CACHED_KEYS = 64;
const keyCache = new Map<string, CryptoKey | Promise<CryptoKey>>();

/** The HMAC key of a secret, imported once and cached (resolved keys are returned as is). */
function hmacKey(secret: string): CryptoKey | Promise<CryptoKey> {
  const cached = keyCache.get(secret);
  if (cached) return cached;
  if (keyCache.size >= MAX_CACHED_KEYS) keyCache.clear();
  const pending = crypto.subtle.importKey(
    "raw",
    utf8(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
  keyCache.set(secret, pending);
  pending.then(
    (key) => {
      if (keyCache.get(secret) === pending) keyCache.set(secret, key);
    },
    () => keyCache.delete(secret),
  );
  return pending;
}

/** The secrets as a list; anything that is neither a string nor an array is no secret at all. */
function secretList(secrets: Secrets): readonly string[] {
  if (typeof secrets === "string") return [secrets];
  return Array.isArray(secrets) ? secrets : [];
}

function signingInput(purpose: string, body: string): Uint8Array<ArrayBuffer> {
  return utf8(`gatehouse.v1:${purpose}:${body}`);
}

/**
 * Signs a payload for one purpose with the first of `secrets`. Throws
 * {@linkcode AuthError} `invalid_secret` for an empty secret (or list) and `invalid_options`
 * for a bad purpose or ttl.
 *
 * @example
 * ```ts
 * import { signToken, verifyToken } from "@gatehouse/gatehouse";
 * const token = await signToken("s3cret", { purpose: "reset", payload: { userId: 7 }, ttlSeconds: 3600 });
 * const claims = await verifyToken<{ userId: number }>("s3cret", token, { purpose: "reset" });
 * console.log(claims?.payload.userId); // 7
 * ```
 */
export async function signToken<T>(
  secrets: Secrets,
  options: SignTokenOptions<T>,
): Promise<string> {
  const secret = secretList(secrets)[0];
  if (typeof secret !== "string" || secret.length === 0) {
    throw new AuthError("invalid_secret", "a non-empty secret is required to sign");
  }
  const { purpose, ttlSeconds } = options;
  if (typeof purpose !== "string" || purpose.length === 0) {
    throw new AuthError("invalid_options", "purpose must be a non-empty string");
  }
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new AuthError("invalid_options", "ttlSeconds must be a positive integer");
  }
  const now = options.now ?? Date.now();
  if (!Number.isFinite(now)) throw new AuthError("invalid_options", "now must be a number");
  const iat = Math.floor(now / 1000);
  const body = b64urlEncode(utf8(JSON.stringify([iat, iat + ttlSeconds, options.payload])));
  const key = hmacKey(secret);
  const cryptoKey = key instanceof Promise ? await key : key;
  const sig = await crypto.subtle.sign("HMAC", cryptoKey, signingInput(purpose, body));
  return `${body}.${b64urlEncode(new Uint8Array(sig))}`;
}

/**
 * Verifies a token for one purpose against any of `secrets`. Never throws: a missing,
 * malformed, truncated, tampered, expired, wrong-secret or wrong-purpose token gives `null`.
 *
 * @example
 * ```ts
 * import { signToken, verifyToken } from "@gatehouse/gatehouse";
 * const token = await signToken(["new", "old"], { purpose: "invite", payload: "x", ttlSeconds: 60 });
 * console.log(await verifyToken("new", token, { purpose: "reset" })); // null: other purpose
 * ```
 */
export async function verifyToken<T>(
  secrets: Secrets,
  token: string,
  options: VerifyTokenOptions,
): Promise<TokenClaims<T> | null> {
  try {
    if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) return null;
    const dot = token.indexOf(".");
    if (dot <= 0 || dot !== token.lastIndexOf(".")) return null;
    const body = token.slice(0, dot);
    const sig = b64urlDecode(token.slice(dot + 1));
    if (!sig || sig.length !== 32) return null;
    const { purpose } = options;
    if (typeof purpose !== "string" || purpose.length === 0) return null;
    const input = signingInput(purpose, body);
    let valid = false;
    for (const secret of secretList(secrets)) {
      if (typeof secret !== "string" || secret.length === 0) continue;
      const key = hmacKey(secret);
      const cryptoKey = key instanceof Promise ? await key : key;
      if (await crypto.subtle.verify("HMAC", cryptoKey, sig, input)) {
        valid = true;
        break;
      }
    }
    if (!valid) return null;
    const bytes = b64urlDecode(body);
    const json = bytes && fromUtf8(bytes);
    if (!json) return null;
    const parsed: unknown = JSON.parse(json);
    if (!Array.isArray(parsed) || parsed.length !== 3) return null;
    const [iat, exp, payload] = parsed;
    if (!Number.isSafeInteger(iat) || !Number.isSafeInteger(exp) || exp <= iat) return null;
    const now = options.now ?? Date.now();
    if (!(now < exp * 1000)) return null;
    return { payload: payload as T, iat, exp };
  } catch {
    return null;
  }
}
