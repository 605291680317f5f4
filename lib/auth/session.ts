/**
 * Session cookies: a purpose-bound signed token (see `token.ts`) carrying the subject (an
 * e-mail or a user id), in a cookie that is HttpOnly, Secure, SameSite=Lax, Path=/ and has a
 * Max-Age, so `__Host-` names work.
 *
 * @module
 */
import { AuthError } from "./_errors.ts";
import { COOKIE_NAME, cookieValues } from "./_cookie.ts";
import { type Secrets, signToken, verifyToken } from "./token.ts";

/** Default session lifetime: 7 days, in seconds. */
export const DEFAULT_SESSION_MAX_AGE = 604_800;

/** A site's session settings. */
export interface SessionConfig {
  /** The site's `SESSION_SECRET` (or a list for rotation: the first signs, any verifies). */
  secret: Secrets;
  /** Cookie name, e.g. `__Host-session` (the `__Host-` prefix is supported). */
  cookieName: string;
  /** Lifetime in seconds (default 604,800 = 7 days). */
  maxAge?: number;
}

/** Options of {@linkcode createSessionCookie}. */
export interface CreateSessionOptions {
  /** Lifetime in seconds for this cookie, overriding the config's. */
  maxAge?: number;
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

/** Options of {@linkcode readSession}. */
export interface ReadSessionOptions {
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

/** The identity in a valid session cookie. */
export interface Session {
  /** What the session was created for: an e-mail or a user id. */
  subject: string;
  /** Issued at, seconds since the epoch. */
  issuedAt: number;
  /** Expires at, seconds since the epoch. */
  expiresAt: number;
}

function cookieName(config: SessionConfig): string {
  const name = config?.cookieName;
  if (typeof name !== "string" || !COOKIE_NAME.test(name)) {
    throw new AuthError("invalid_options", "cookieName must be a valid cookie name");
  }
  return name;
}

function purpose(name: string): string {
  return `session:${name}`;
}

function attributes(maxAge: number): string {
  return `HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${maxAge}`;
}

/**
 * Creates a signed session for `subject` and returns the `Set-Cookie` header value. Throws
 * {@linkcode AuthError} for an invalid cookie name, empty secret or subject, or a non-positive
 * max age.
 *
 * @example
 * ```ts
 * import { createSessionCookie } from "@gatehouse/gatehouse";
 * const config = { secret: "a long random SESSION_SECRET", cookieName: "__Host-session" };
 * const setCookie = await createSessionCookie(config, "owner@example.com");
 * const response = new Response(null, { status: 302, headers: { location: "/", "set-cookie": setCookie } });
 * ```
 */
export async function createSessionCookie(
  config: SessionConfig,
  subject: string,
  options?: CreateSessionOptions,
): Promise<string> {
  const name = cookieName(config);
  if (typeof subject !== "string" || subject.length === 0) {
    throw new AuthError("invalid_options", "subject must be a non-empty string");
  }
  const maxAge = options?.maxAge ?? config.maxAge ?? DEFAULT_SESSION_MAX_AGE;
  if (!Number.isSafeInteger(maxAge) || maxAge <= 0) {
    throw new AuthError("invalid_options", "maxAge must be a positive integer of seconds");
  }
  const token = await signToken(config.secret, {
    purpose: purpose(name),
    payload: subject,
    ttlSeconds: maxAge,
    now: options?.now,
  });
  return `${name}=${token}; ${attributes(maxAge)}`;
}

/**
 * Reads the session from a request's `Cookie` header: the identity, or `null` when the cookie
 * is missing, tampered, truncated, expired, or signed with another secret. Never throws.
 *
 * @example
 * ```ts
 * import { readSession } from "@gatehouse/gatehouse";
 * const config = { secret: "a long random SESSION_SECRET", cookieName: "__Host-session" };
 * const session = await readSession(config, new Request("https://example.com/"));
 * console.log(session); // null: no cookie
 * ```
 */
export async function readSession(
  config: SessionConfig,
  request: { readonly headers: Headers },
  options?: ReadSessionOptions,
): Promise<Session | null> {
  try {
    const name = cookieName(config);
    for (const value of cookieValues(request.headers.get("cookie"), name)) {
      const claims = await verifyToken<unknown>(config.secret, value, {
        purpose: purpose(name),
        now: options?.now,
      });
      if (claims && typeof claims.payload === "string" && claims.payload.length > 0) {
        return { subject: claims.payload, issuedAt: claims.iat, expiresAt: claims.exp };
      }
    }
    return null;
  } catch {
    return null;
  }
}

/**
 * The `Set-Cookie` value that removes the session cookie (sign-out).
 *
 * @example
 * ```ts
 * import { clearSessionCookie } from "@gatehouse/gatehouse";
 * const config = { secret: "a long random SESSION_SECRET", cookieName: "__Host-session" };
 * console.log(clearSessionCookie(config)); // "__Host-session=; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=0"
 * ```
 */
export function clearSessionCookie(config: SessionConfig): string {
  return `${cookieName(config)}=; ${attributes(0)}`;
}
