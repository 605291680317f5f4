/**
 * Sessions of database users, revocable: the session cookie carries the user's security
 * `stamp` as its generation (see the core's `createSessionCookie`), and reading it checks the
 * stamp stored now. The stamp changes on every password change, reset, e-mail change,
 * verification and {@linkcode signOutEverywhere}, so every cookie issued before stops working
 * at once, on every server, whatever the core's verified-cookie cache holds.
 *
 * @module
 */
import {
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
import type { D1Database } from "./types.ts";
import { newStamp, publicUser, type User, userById, type UserRow } from "./users.ts";
import { run } from "./query.ts";

/** Parameters of {@linkcode createUserSession}. */
export interface CreateUserSessionParams extends ClockOptions {
  /** The site's session settings (the core's `SessionConfig`). */
  session: SessionConfig;
  /** The user to sign in (from `login`, `verifyOtp` or `findOrCreateOAuthUser`). */
  userId: string;
  /** Lifetime in seconds for this cookie, overriding the config's. */
  maxAge?: number;
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
    try {
      const setCookie = await createSessionCookie(o.session as SessionConfig, user.id, {
        now,
        maxAge: o.maxAge as number | undefined,
        generation: user.stamp,
      });
      return { ok: true as const, setCookie };
    } catch (e) {
      return fail(e instanceof AuthError ? "invalid_input" : "internal_error");
    }
  });
}

/** Parameters of {@linkcode readUserSession}. */
export interface ReadUserSessionParams extends ClockOptions {
  /** The site's session settings (the core's `SessionConfig`). */
  session: SessionConfig;
  /** The request (anything with `headers`). */
  request: { readonly headers: Headers };
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
 * user's current stamp and belong to a verified user. One query per call. Never throws:
 * anything else, a database failure included, is `null`.
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
      generation: async (subject) => {
        const row = found.row = await userById(db, subject);
        return row && Number(row.email_verified) === 1 ? row.stamp : null;
      },
    });
    if (!session || !found.row) return null;
    return { user: publicUser(found.row), session };
  } catch {
    return null;
  }
}

/** Parameters of {@linkcode signOutEverywhere}. */
export interface SignOutEverywhereParams extends ClockOptions {
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
export function signOutEverywhere(
  db: D1Database,
  p: SignOutEverywhereParams,
): Promise<SignOutEverywhereResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const now = nowOf(o.now);
    const changed = await run(db, "UPDATE users SET stamp = ?, updated_at = ? WHERE id = ?", [
      newStamp(),
      now,
      userId,
    ]);
    if (changed !== 1) fail("not_found");
    return { ok: true as const };
  });
}
