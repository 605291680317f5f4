/**
 * Sessions of database users, revocable: the session cookie carries the user's security
 * `stamp` as its generation (see the core's `createSessionCookie`), and reading it checks the
 * stamp stored now. The stamp changes on every password change, reset, e-mail change,
 * verification and {@linkcode signOutEverywhere}, so every cookie issued before stops working
 * at once, on every server, whatever the core's verified-cookie cache holds. A plain
 * {@linkcode signOut} ends one session: its id goes to the table `revoked_sessions`, which
 * {@linkcode readUserSession} checks in the same query as the user.
 *
 * @module
 */
import {
  clearSessionCookie,
  createSessionCookie,
  readSession,
  type Session,
  type SessionConfig,
} from "../auth/session.ts";
import { AuthError } from "../auth/_errors.ts";
import type { ClockOptions } from "./input.ts";
import { nowOf, params, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import { COLUMNS, newStamp, publicUser, type User, userById, type UserRow } from "./users.ts";
import { first, run } from "./query.ts";
import { recordRevoked } from "./session_revocation.ts";
import { recordSession, type SessionRecordInput, touchSession } from "./user_sessions.ts";

/** Parameters of {@linkcode createUserSession}. */
export interface CreateUserSessionParams extends ClockOptions {
  /** The site's session settings (the core's `SessionConfig`). */
  session: SessionConfig;
  /** The user to sign in (from `login`, `verifyOtp` or `findOrCreateOAuthUser`). */
  userId: string;
  /** Lifetime in seconds for this cookie, overriding the config's. */
  maxAge?: number;
  /**
   * Keep the session as a record the user can see and end (`listUserSessions`): what the
   * site knows of the request (user agent, IP address, how the user signed in).
   */
  record?: SessionRecordInput;
}

/** Result of {@linkcode createUserSession}: the `Set-Cookie` header value. */
export type CreateUserSessionResult = FlowResult<
  { setCookie: string },
  CommonError | "not_found" | "email_not_verified"
>;

/**
 * Creates the session cookie of a verified user, bound to the user's current stamp. Never
 * throws; a session config the core refuses is `invalid_input`.
 *
 * @example
 * ```ts
 * import { createUserSession, login, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const session = { secret: "SESSION_SECRET value", cookieName: "__Host-session" };
 * const l = await login(db, { email: "ada@example.com", password: "correct horse battery staple" });
 * if (l.ok) {
 *   const s = await createUserSession(db, { session, userId: l.userId });
 *   if (s.ok) new Response(null, { status: 303, headers: { location: "/", "set-cookie": s.setCookie } });
 * }
 * ```
 */
export function createUserSession(
  db: D1Database,
  p: CreateUserSessionParams,
): Promise<CreateUserSessionResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    if (Number(user.email_verified) !== 1) fail("email_not_verified");
    let setCookie: string;
    try {
      setCookie = await createSessionCookie(o.session as SessionConfig, user.id, {
        now,
        maxAge: o.maxAge as number | undefined,
        generation: user.stamp,
      });
    } catch (e) {
      return fail(e instanceof AuthError ? "invalid_input" : "internal_error");
    }
    if (o.record !== undefined) {
      // The new cookie's own id and expiry, read back as a browser would send it.
      const cookie = setCookie.slice(0, setCookie.indexOf(";"));
      const made = await readSession(o.session as SessionConfig, {
        headers: new Headers({ cookie }),
      }, { now, generation: user.stamp });
      if (!made) fail("internal_error");
      await recordSession(db, {
        id: made.id,
        userId: user.id,
        input: o.record,
        expiresAt: made.expiresAt * 1000,
        now,
      });
    }
    return { ok: true as const, setCookie };
  });
}

/** Parameters of {@linkcode readUserSession}. */
export interface ReadUserSessionParams extends ClockOptions {
  /** The site's session settings (the core's `SessionConfig`). */
  session: SessionConfig;
  /** The request (anything with `headers`). */
  request: { readonly headers: Headers };
  /**
   * The site records sessions (`createUserSession` with `record`): refresh the session's last
   * request, at most once a minute (one more statement per call).
   */
  recorded?: boolean;
}

/** A signed-in user: the public view of the row and the session that proved it. */
export interface UserSession {
  /** The user, as stored now. */
  user: User;
  /** The session cookie's identity (its `issuedAt` serves `removeUser`'s re-authentication). */
  session: Session;
}

/**
 * Reads the signed-in user of a request: the session cookie must verify, be bound to the
 * user's current stamp, not be signed out ({@linkcode signOut}) and belong to a verified user.
 * One query per call. Never throws: anything else, a database failure included (a database
 * without the `revoked_sessions` table too: run `migrate`), is `null`.
 *
 * @example
 * ```ts
 * import { openLibsql, readUserSession } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const session = { secret: "SESSION_SECRET value", cookieName: "__Host-session" };
 * const me = await readUserSession(db, { session, request: new Request("https://example.com/") });
 * console.log(me); // null: no cookie
 * ```
 */
export async function readUserSession(
  db: D1Database,
  p: ReadUserSessionParams,
): Promise<UserSession | null> {
  try {
    const o = params(p);
    const now = nowOf(o.now);
    const request = o.request as ReadUserSessionParams["request"];
    const found: { row?: UserRow | null } = {};
    const session = await readSession(o.session as SessionConfig, request, {
      now,
      generation: async (subject, read) => {
        const row = found.row = await liveUser(db, subject, read.id);
        return row && Number(row.email_verified) === 1 ? row.stamp : null;
      },
    });
    if (!session || !found.row) return null;
    if (o.recorded === true) await touchSession(db, session.id, now);
    return { user: publicUser(found.row), session };
  } catch {
    return null;
  }
}

/**
 * The user `id`, unless session `sessionId` was signed out (then null): one query. Stops with
 * `db_error` when the database fails.
 */
function liveUser(db: D1Database, id: string, sessionId: string): Promise<UserRow | null> {
  return first<UserRow>(
    db,
    `SELECT ${COLUMNS} FROM users WHERE id = ?
     AND NOT EXISTS (SELECT 1 FROM revoked_sessions WHERE id = ?)`,
    id,
    sessionId,
  );
}

/** Parameters of {@linkcode signOut}. */
export interface SignOutParams extends EventOptions, ClockOptions {
  /** The site's session settings (the core's `SessionConfig`). */
  session: SessionConfig;
  /** The request (anything with `headers`) that carries the session cookie. */
  request: { readonly headers: Headers };
}

/**
 * Result of {@linkcode signOut}: the `Set-Cookie` value that removes the cookie from this
 * browser, and whether a session was ended (false when the request had no valid cookie).
 */
export type SignOutResult = FlowResult<{ setCookie: string; ended: boolean }, CommonError>;

/**
 * Signs out the session of a request everywhere: the cookie stops working in this browser
 * and in every copy (another tab's, a stolen one), while the user's other sessions go on. The
 * session's id is recorded in `revoked_sessions` until the session's expiry (each sign-out also
 * deletes up to 100 expired rows). Send `setCookie` in the answer. A request without a valid
 * cookie is `{ok:true, ended:false}`. Never throws; on `db_error` the session still works
 * elsewhere (still send the cookie removal, and say so).
 *
 * @example
 * ```ts
 * import { openLibsql, signOut } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const session = { secret: "SESSION_SECRET value", cookieName: "__Host-session" };
 * const request = new Request("https://example.com/logout", { method: "POST" });
 * const out = await signOut(db, { session, request });
 * if (out.ok) {
 *   new Response(null, { status: 303, headers: { location: "/", "set-cookie": out.setCookie } });
 * }
 * ```
 */
export async function signOut(db: D1Database, p: SignOutParams): Promise<SignOutResult> {
  const seen: Seen = { detail: { scope: "sign-out" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const now = nowOf(o.now);
    const config = o.session as SessionConfig;
    const request = o.request as SignOutParams["request"];
    if (typeof request !== "object" || request === null || !(request.headers instanceof Headers)) {
      fail("invalid_input");
    }
    let setCookie: string;
    try {
      setCookie = clearSessionCookie(config);
    } catch {
      return fail("invalid_input");
    }
    // The signature and expiry are checked, so only a holder of a valid cookie adds a row.
    const session = await readSession(config, request, { now });
    if (session) {
      seen.userId = session.subject;
      seen.detail = { ...seen.detail, sessionId: session.id };
      await recordRevoked(db, session.id, session.expiresAt * 1000, now);
    }
    return { ok: true as const, setCookie, ended: session !== null };
  });
  return await report(p, result, seen, (r) => (r.ok && r.ended ? "session.ended" : null));
}

/** Parameters of {@linkcode signOutEverywhere}. */
export interface SignOutEverywhereParams extends EventOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
}

/** Result of {@linkcode signOutEverywhere}. */
export type SignOutEverywhereResult = FlowResult<Record<never, never>, CommonError | "not_found">;

/**
 * Ends every session of the user, on every device, by replacing the security stamp; links
 * for a reset or an e-mail change sent before stop working too. Sign the current browser in
 * again with {@linkcode createUserSession} if it should stay. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, signOutEverywhere } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await signOutEverywhere(db, { userId: "5d0c..." });
 * if (!result.ok) console.log(result.error); // "not_found"
 * ```
 */
export async function signOutEverywhere(
  db: D1Database,
  p: SignOutEverywhereParams,
): Promise<SignOutEverywhereResult> {
  const seen: Seen = { detail: { scope: "everywhere" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const userId = stringOf(o.userId, 200);
    seen.userId = userId;
    const now = nowOf(o.now);
    const changed = await run(db, "UPDATE users SET stamp = ?, updated_at = ? WHERE id = ?", [
      newStamp(),
      now,
      userId,
    ]);
    if (changed !== 1) fail("not_found");
    return { ok: true as const };
  });
  return await report(p, result, seen, (r) => (r.ok ? "session.ended" : null));
}
