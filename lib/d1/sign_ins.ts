/**
 * How an account signs in, for its own account page: the provider sign-ins linked to it, and
 * a first password for an account that has none (made through a provider).
 *
 * @module
 */
import { hashPassword } from "../auth/password.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import { appNameOf, iterationsOf, nowOf, params, passwordOf, stringOf } from "./input.ts";
import type { CommonError, FlowResult, PasswordError } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import { checkPassword, normalizePassword } from "./policy.ts";
import { newStamp, reauthError, userById } from "./users.ts";
import { all, run } from "./query.ts";

/** A provider sign-in linked to an account. */
export interface LinkedSignIn {
  /** Provider id (`google`, `github`, `microsoft`, ...). */
  provider: string;
  /** The e-mail the provider gave when it was linked (null if none was kept). */
  email: string | null;
  /** When it was linked, milliseconds since the epoch. */
  linkedAt: number;
}

/** Result of {@linkcode listLinkedSignIns}. */
export type ListLinkedSignInsResult = FlowResult<{ signIns: LinkedSignIn[] }, CommonError>;

/**
 * The provider sign-ins linked to an account, oldest first (the provider's own user id is not
 * shown). Never throws.
 *
 * @example
 * ```ts
 * import { listLinkedSignIns, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const linked = await listLinkedSignIns(db, "5d0c...");
 * if (linked.ok) for (const s of linked.signIns) console.log(s.provider, s.email);
 * ```
 */
export function listLinkedSignIns(
  db: D1Database,
  userId: string,
): Promise<ListLinkedSignInsResult> {
  return guard(async () => {
    const id = stringOf(userId, 200);
    const rows = await all<{ provider: string; email: string | null; created_at: number }>(
      db,
      "SELECT provider, email, created_at FROM oauth_identities WHERE user_id = ? ORDER BY created_at",
      id,
    );
    return {
      ok: true as const,
      signIns: rows.map((r) => ({
        provider: String(r.provider),
        email: r.email === null ? null : String(r.email),
        linkedAt: Number(r.created_at),
      })),
    };
  });
}

/** Parameters of {@linkcode setPassword}. */
export interface SetPasswordParams extends HashingOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The new password (NIST SP 800-63B policy). */
  newPassword: string;
  /** The session that proves it is them: issued less than `maxSessionAgeSeconds` ago. */
  session: { issuedAt: number };
  /** Freshness limit of `session`, in seconds (default 300). */
  maxSessionAgeSeconds?: number;
  /** Site name, refused as a password. */
  appName?: string;
}

/** Errors of {@linkcode setPassword}. */
export type SetPasswordError =
  | CommonError
  | "not_found"
  | "has_password"
  | "reauth_required"
  | PasswordError;

/** Result of {@linkcode setPassword}. */
export type SetPasswordResult = FlowResult<Record<never, never>, SetPasswordError>;

/**
 * Gives an account without a password (made through a provider) its first one, when its
 * session is fresh (`reauth_required` otherwise: sign in again with the provider). An account
 * that has a password gets `has_password`: changing it needs the current one
 * (`changePassword`). Every other session ends, as with any credential change. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, setPassword } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await setPassword(db, {
 *   userId: "5d0c...",
 *   newPassword: "a passphrase of my own",
 *   session: { issuedAt: Math.floor(Date.now() / 1000) },
 * });
 * ```
 */
export function setPassword(db: D1Database, p: SetPasswordParams): Promise<SetPasswordResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const next = normalizePassword(passwordOf(o.newPassword));
    const iterations = iterationsOf(o.iterations);
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    if (typeof user.password_hash === "string" && user.password_hash.length > 0) {
      fail("has_password");
    }
    // Only the session proves it (there is no password to ask for).
    const denied = await reauthError(db, user, { ...o, password: undefined }, now);
    if (denied) fail(denied === "wrong_password" ? "reauth_required" : denied);
    const weak = checkPassword(next, { email: user.email, appName: appNameOf(o.appName) });
    if (weak) fail(weak);
    const hash = await hashPassword(next, { iterations });
    const changed = await run(
      db,
      `UPDATE users SET password_hash = ?, stamp = ?, updated_at = ?
       WHERE id = ? AND (password_hash IS NULL OR password_hash = '')`,
      [hash, newStamp(), now, userId],
    );
    if (changed !== 1) fail("has_password");
    return { ok: true as const };
  });
}
