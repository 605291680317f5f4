/**
 * Session cookies: a purpose-bound signed token (see `token.ts`) carrying the subject (an
 * e-mail or a user id), a random session id and, optionally, a generation, in a cookie that is
 * HttpOnly, Secure, SameSite=Lax, Path=/ and has a Max-Age, so `__Host-` names work.
 *
 * Revocation: a cookie created with a `generation` (a per-user value the site changes to end
 * that user's sessions, e.g. the `/d1` users' security stamp) is accepted by `readSession` only
 * while the site passes the same current generation. One session ends everywhere (a sign-out
 * that also stops copies of the cookie) when its id is put in a revocation store
 * (`revocation.ts`) that `readSession` is given. Changing a secret list so that the signing
 * secret is gone ends every session.
 *
 * @module
 */
import { AuthError } from "./_errors.ts";
import { COOKIE_NAME, cookieValues } from "./_cookie.ts";
import { b64urlEncode, randomBytes, timingSafeEqualText, utf8 } from "./_encoding.ts";
import { type Secrets, signToken, verifyToken } from "./token.ts";
import type { RevocationStore } from "./revocation.ts";

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

/** Longest generation accepted, in characters. */
const MAX_GENERATION = 256;

/** Options of {@linkcode createSessionCookie}. */
export interface CreateSessionOptions {
  /** Lifetime in seconds for this cookie, overriding the config's. */
  maxAge?: number;
  /**
   * The user's current session generation (1 to 256 characters), signed into the cookie. When
   * the site later changes it (password change, reset, "sign out everywhere"), every cookie
   * issued before stops verifying in {@linkcode readSession} given the new value. It is
   * signed, not encrypted: the cookie's holder can read it, so it must not be a secret.
   */
  generation?: string;
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
}

/** Options of {@linkcode readSession}. */
export interface ReadSessionOptions {
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
  /**
   * The current generation of the session's subject: a string, or a function that looks it up
   * for the subject (called after the signature check, on every read, cached cookies
   * included). When given, only a cookie carrying exactly this generation is a session; a
   * cookie without one, a function that answers `null`/`undefined`, throws or rejects, all
   * give `null`. When omitted, generations are not checked.
   */
  generation?: string | GenerationLookup;
  /**
   * The site's store of ended sessions (see `revokeSession`): a cookie whose
   * session id it holds is refused. Asked after the signature and generation checks, on every
   * read, cached cookies included; a store that throws or rejects refuses the cookie too.
   */
  revoked?: RevocationStore;
}

/**
 * Looks up the current session generation of a subject (e.g. from the site's user store). The
 * second argument is the verified session being read (its id, times and generation), for a
 * store that checks more in the same query.
 */
export type GenerationLookup = (
  subject: string,
  session: Session,
) => string | null | undefined | Promise<string | null | undefined>;

/** The identity in a valid session cookie. */
export interface Session {
  /** What the session was created for: an e-mail or a user id. */
  subject: string;
  /**
   * The session's id: random (22 base64url characters), signed into the cookie when it is
   * created, and the same in every copy of that cookie, so a store can end this session alone
   * (see `revokeSession`). A cookie created before ids existed gets a digest of the
   * cookie itself, `~` and 22 characters.
   */
  id: string;
  /** Issued at, seconds since the epoch. */
  issuedAt: number;
  /** Expires at, seconds since the epoch. */
  expiresAt: number;
  /** The generation the cookie was created with (absent when it has none). */
  generation?: string;
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
 * Creates a signed session for `subject`, with a new random session id, and returns the
 * `Set-Cookie` header value. Throws
 * {@linkcode AuthError} for an invalid cookie name, empty secret or subject, a non-positive
 * max age, or a generation that is not 1 to 256 characters.
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
  const generation = options?.generation;
  if (generation !== undefined && !isGeneration(generation)) {
    throw new AuthError("invalid_options", "generation must be a string of 1 to 256 characters");
  }
  const token = await signToken(config.secret, {
    purpose: purpose(name),
    payload: [subject, generation ?? null, newSessionId()],
    ttlSeconds: maxAge,
    now: options?.now,
  });
  return `${name}=${token}; ${attributes(maxAge)}`;
}

/**
 * Reads the session from a request's `Cookie` header: the identity, or `null` when the cookie
 * is missing, tampered, truncated, expired, signed with another secret, (with the `generation`
 * option) of another generation, or (with the `revoked` option) ended. Never throws.
 *
 * @example
 * ```ts
 * import { memoryRevocationStore, readSession } from "@gatehouse/gatehouse";
 * const config = { secret: "a long random SESSION_SECRET", cookieName: "__Host-session" };
 * const session = await readSession(config, new Request("https://example.com/"));
 * console.log(session); // null: no cookie
 * // With revocation: the site's current generation for the subject.
 * const generations = new Map([["u1", "3"]]);
 * await readSession(config, new Request("https://example.com/"), {
 *   generation: (subject) => generations.get(subject),
 * });
 * // With sign-out that ends copies too: the site's store of ended sessions.
 * await readSession(config, new Request("https://example.com/"), {
 *   revoked: memoryRevocationStore(),
 * });
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
      let session = scope?.get(value);
      if (session && !(now < session.expiresAt * 1000)) {
        scope!.delete(value);
        continue;
      }
      if (!session) {
        const claims = await verifyToken<unknown>(config.secret, value, {
          purpose: purpose(name),
          now,
        });
        const parsed = claims && await sessionOf(value, claims.payload, claims.iat, claims.exp);
        if (!parsed) continue;
        session = parsed;
        if (scope) remember(scope, value, session);
      }
      // Checked on every read, remembered cookie or not: revocation is never cached.
      if (options?.generation !== undefined && !(await current(session, options.generation))) {
        continue;
      }
      if (options?.revoked !== undefined && !(await live(session, options.revoked))) continue;
      return { ...session };
    }
    return null;
  } catch {
    return null;
  }
}

function isGeneration(g: unknown): g is string {
  return typeof g === "string" && g.length > 0 && g.length <= MAX_GENERATION;
}

/** A new random session id: 16 bytes, base64url. */
function newSessionId(): string {
  return b64urlEncode(randomBytes(16));
}

/** Longest session id accepted in a cookie, in characters. */
const MAX_ID = 64;

/**
 * The session in a verified token's payload: `[subject, generation | null, id]`, or one of the
 * forms before session ids, a subject or `[subject, generation]` (given an id derived from
 * the cookie's text, so that they can be ended one by one too).
 */
async function sessionOf(
  value: string,
  payload: unknown,
  issuedAt: number,
  expiresAt: number,
): Promise<Session | null> {
  if (Array.isArray(payload) && payload.length === 3) {
    const [subject, generation, id] = payload;
    if (
      typeof subject !== "string" || subject.length === 0 || typeof id !== "string" ||
      id.length === 0 || id.length > MAX_ID || !(generation === null || isGeneration(generation))
    ) {
      return null;
    }
    const session: Session = { subject, id, issuedAt, expiresAt };
    if (generation !== null) session.generation = generation;
    return session;
  }
  if (typeof payload === "string" && payload.length > 0) {
    return { subject: payload, id: await legacyId(value), issuedAt, expiresAt };
  }
  if (Array.isArray(payload) && payload.length === 2) {
    const [subject, generation] = payload;
    if (typeof subject === "string" && subject.length > 0 && isGeneration(generation)) {
      return { subject, id: await legacyId(value), issuedAt, expiresAt, generation };
    }
  }
  return null;
}

/** The id of a cookie made before session ids: `~` and a digest of its text. */
async function legacyId(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", utf8(`gatehouse session id\0${value}`));
  return `~${b64urlEncode(new Uint8Array(digest, 0, 16))}`;
}

/** Whether the session's generation is the subject's current one. */
async function current(session: Session, wanted: string | GenerationLookup): Promise<boolean> {
  if (session.generation === undefined) return false;
  let expected: unknown;
  try {
    expected = typeof wanted === "function"
      ? await wanted(session.subject, { ...session })
      : wanted;
  } catch {
    return false;
  }
  return isGeneration(expected) && timingSafeEqualText(session.generation, expected);
}

/** Whether the store does not hold the session's id (a failing store refuses the cookie). */
async function live(session: Session, store: RevocationStore): Promise<boolean> {
  try {
    return (await store.isRevoked(session.id, { ...session })) === false;
  } catch {
    return false;
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
 * The `Set-Cookie` value that removes the session cookie from this browser (sign-out). Copies of
 * the cookie elsewhere stay valid unless the site also ends the session with
 * `revokeSession` (or a generation change).
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
