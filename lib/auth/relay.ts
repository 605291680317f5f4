/**
 * The identity relay: a central broker that ran the OAuth sign-in signs the verified identity
 * with a site's own relay secret and redirects back with `?relay=<token>`; the site verifies it
 * and checks the nonce it issued. Tokens are purpose-bound (`relay`) and live 2 minutes.
 *
 * @module
 */
import { AuthError } from "./_errors.ts";
import { type Secrets, signToken, verifyToken } from "./token.ts";

/** Lifetime of a relay token: 2 minutes. */
export const RELAY_TTL_SECONDS = 120;
const PURPOSE = "relay";

/** The identity a relay token carries. */
export interface RelayClaims {
  /** The provider-verified e-mail. */
  email: string;
  /** Provider id, e.g. `github`. */
  provider: string;
  /** Echoed from the site's start request; the site must compare it with the one it issued. */
  nonce: string;
  /** The provider's id for the user; optional (owner-only sites may omit it). */
  providerUserId?: string;
}

/** Options of {@linkcode signRelay} and {@linkcode verifyRelay}. */
export interface RelayOptions {
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

function isText(v: unknown): v is string {
  return typeof v === "string" && v.length > 0;
}

/**
 * Signs relay claims with a site's relay secret (first of a list, for rotation); valid for 2
 * minutes. Throws {@linkcode AuthError} `invalid_claims` when `email`, `provider` or `nonce`
 * is missing. Without `providerUserId` the token has exactly the three-field shape.
 *
 * @example
 * ```ts
 * import { signRelay, verifyRelay } from "@gatehouse/gatehouse";
 * const token = await signRelay("relay-secret", { email: "a@example.com", provider: "github", nonce: "n1" });
 * const claims = await verifyRelay("relay-secret", token);
 * console.log(claims?.nonce === "n1"); // true (the site compares with the nonce it issued)
 * ```
 */
export async function signRelay(
  secret: Secrets,
  claims: RelayClaims,
  options?: RelayOptions,
): Promise<string> {
  if (!claims || !isText(claims.email) || !isText(claims.provider) || !isText(claims.nonce)) {
    throw new AuthError("invalid_claims", "relay claims need email, provider and nonce");
  }
  const payload: RelayClaims = {
    email: claims.email,
    provider: claims.provider,
    nonce: claims.nonce,
  };
  if (claims.providerUserId !== undefined) {
    if (!isText(claims.providerUserId)) {
      throw new AuthError("invalid_claims", "providerUserId must be a non-empty string");
    }
    payload.providerUserId = claims.providerUserId;
  }
  return await signToken(secret, {
    purpose: PURPOSE,
    payload,
    ttlSeconds: RELAY_TTL_SECONDS,
    now: options?.now,
  });
}

/**
 * Verifies a relay token; `null` when it is invalid, expired (after 2 minutes), signed with
 * another secret or for another purpose. Never throws.
 *
 * @example
 * ```ts
 * import { verifyRelay } from "@gatehouse/gatehouse";
 * console.log(await verifyRelay("relay-secret", "garbage")); // null
 * ```
 */
export async function verifyRelay(
  secret: Secrets,
  token: string,
  options?: RelayOptions,
): Promise<RelayClaims | null> {
  const claims = await verifyToken<Record<string, unknown>>(secret, token, {
    purpose: PURPOSE,
    now: options?.now,
  });
  const p = claims?.payload;
  if (!p || typeof p !== "object" || Array.isArray(p)) return null;
  if (!isText(p.email) || !isText(p.provider) || !isText(p.nonce)) return null;
  const out: RelayClaims = { email: p.email, provider: p.provider, nonce: p.nonce };
  if (p.providerUserId !== undefined) {
    if (!isText(p.providerUserId)) return null;
    out.providerUserId = p.providerUserId;
  }
  return out;
}
