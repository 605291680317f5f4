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
    const now = options?.now ?? Date.now();
    const scope = verifiedScope(config.secret, name);
    for (const value of cookieValues(request.headers.get("cookie"), name)) {
      const seen = scope?.get(value);
      if (seen) {
        if (now < seen.expiresAt * 1000) return { ...seen };
        scope!.delete(value);
        continue;
      }
      const claims = await verifyToken<unknown>(config.secret, value, {
        purpose: purpose(name),
        now,
      });
      if (claims && typeof claims.payload === "string" && claims.payload.length > 0) {
        const session = { subject: claims.payload, issuedAt: claims.iat, expiresAt: claims.exp };
        if (scope) remember(scope, value, session);
        return { ...session };
      }
    }
    return null;
  } catch {
    return null;
  }
}

// Cookies verified by this process, per secret list and cookie name: a browser sends the same
// cookie on every request, and a repeat skips the HMAC (a Web Crypto call costs far more than
// a map look-up). Only cookies that passed verification are stored, keyed by their exact text,
// so a hit is a cookie this secret list already accepted; expiry is checked on every read, and
// a changed secret list is another scope. Bounded: 1,024 cookies per scope, 16 scopes.
const MAX_VERIFIED = 1024;
const MAX_SCOPES = 16;
const verified = new Map<string, Map<string, Session>>();

function verifiedScope(secrets: Secrets, name: string): Map<string, Session> | undefined {
  const list = typeof secrets === "string" ? [secrets] : secrets;
  if (!Array.isArray(list) || list.some((s) => typeof s !== "string" || s.length === 0)) {
    return undefined;
  }
  const key = `${name}\u0000${list.join("\u0000")}`;
  let scope = verified.get(key);
  if (!scope) {
    if (verified.size >= MAX_SCOPES) verified.delete(verified.keys().next().value!);
    scope = new Map();
    verified.set(key, scope);
  }
  return scope;
}

function remember(scope: Map<string, Session>, value: string, session: Session): void {
  if (scope.size >= MAX_VERIFIED) scope.delete(scope.keys().next().value!);
  scope.set(value, session);
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
