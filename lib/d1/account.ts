/**
 * Account self-service: change the password, change the display name, remove the account.
 *
 * @module
 */
import { hashPassword } from "../auth/password.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import { appNameOf, iterationsOf, nowOf, params, passwordOf, senderOf, stringOf } from "./input.ts";
import type { CommonError, FlowResult, PasswordError } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import type { EmailSender, Renderer } from "./email.ts";
import { deleteAccount } from "./remove.ts";
import { checkPassword, normalizeName, normalizePassword } from "./policy.ts";
import {
  checkCurrentPassword,
  newStamp,
  publicUser,
  reauthError,
  type ReauthOptions,
  type User,
  userById,
} from "./users.ts";
import { run } from "./query.ts";

/** Parameters of {@linkcode changePassword}. */
export interface ChangePasswordParams extends EventOptions, HashingOptions, ClockOptions {
  /** The signed-in user's id (from the session). */
  userId: string;
  /** The current password. */
  currentPassword: string;
  /** The new password (NIST SP 800-63B policy). */
  newPassword: string;
  /** Site name, refused as a password. */
  appName?: string;
}

/** Errors of {@linkcode changePassword}. */
export type ChangePasswordError =
  | CommonError
  | "not_found"
  | "wrong_password"
  | "too_many_attempts"
  | PasswordError;

/** Result of {@linkcode changePassword}. */
export type ChangePasswordResult = FlowResult<Record<never, never>, ChangePasswordError>;

/**
 * Changes the password after checking the current one (5 wrong ones per account, then the
 * throttle asks to wait: `too_many_attempts` with `retryAfter`); outstanding reset and
 * e-mail-change links and every session stop working. Never throws.
 *
 * @example
 * ```ts
 * import { changePassword, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await changePassword(db, {
 *   userId: "5d0c...",
 *   currentPassword: "correct horse battery staple",
 *   newPassword: "an even longer passphrase",
 * });
 * ```
 */
export async function changePassword(
  db: D1Database,
  p: ChangePasswordParams,
): Promise<ChangePasswordResult> {
  const seen: Seen = { detail: { method: "change" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const userId = stringOf(o.userId, 200);
    seen.userId = userId;
    const current = normalizePassword(passwordOf(o.currentPassword));
    const next = normalizePassword(passwordOf(o.newPassword));
    const iterations = iterationsOf(o.iterations);
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    if (!(await checkCurrentPassword(db, user, current, iterations, now))) {
      fail("wrong_password");
    }
    const weak = checkPassword(next, { email: user.email, appName: appNameOf(o.appName) });
    if (weak) fail(weak);
    const hash = await hashPassword(next, { iterations });
    const changed = await run(
      db,
      `UPDATE users SET password_hash = ?, stamp = ?, updated_at = ?
       WHERE id = ? AND password_hash = ?`,
      [hash, newStamp(), now, userId, user.password_hash],
    );
    // Zero rows: the password changed meanwhile, so the current one given is stale.
    if (changed !== 1) fail("wrong_password");
    return { ok: true as const };
  });
  return await report(p, result, seen, (r) => (r.ok ? "password.changed" : null));
}

/** Parameters of {@linkcode changeName}. */
export interface ChangeNameParams extends ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The new display name (1 to 100 characters, trimmed), or null to clear it. */
  name: string | null;
}

/** Errors of {@linkcode changeName}. */
export type ChangeNameError = CommonError | "not_found" | "invalid_name";

/** Result of {@linkcode changeName}. */
export type ChangeNameResult = FlowResult<{ name: string | null }, ChangeNameError>;

/**
 * Sets (or clears) the user's display name, `users.name`. Never throws.
 *
 * @example
 * ```ts
 * import { changeName, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await changeName(db, { userId: "5d0c...", name: "Ada Lovelace" });
 * ```
 */
export function changeName(db: D1Database, p: ChangeNameParams): Promise<ChangeNameResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const now = nowOf(o.now);
    const name = o.name === null ? null : normalizeName(o.name) ?? fail("invalid_name");
    const changed = await run(db, "UPDATE users SET name = ?, updated_at = ? WHERE id = ?", [
      name,
      now,
      userId,
    ]);
    if (changed !== 1) fail("not_found");
    return { ok: true as const, name };
  });
}

/**
 * Another name for {@linkcode changeName}: the username of an account is its display name.
 *
 * @example
 * ```ts
 * import { changeUsername, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await changeUsername(db, { userId: "5d0c...", name: "ada" });
 * ```
 */
export const changeUsername: (db: D1Database, p: ChangeNameParams) => Promise<ChangeNameResult> =
  changeName;

/** Parameters of {@linkcode removeUser}. */
export interface RemoveUserParams extends ReauthOptions, HashingOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The site's e-mail sender (for the `accountDeletedEmail` notice). */
  sendEmail: EmailSender;
  /** Replaces the built-in `accountDeletedEmail`. */
  renderAccountDeleted?: Renderer<{ email?: string; appName?: string }>;
  /** Site name for the templates. */
  appName?: string;
}

/** Errors of {@linkcode removeUser}. */
export type RemoveUserError =
  | CommonError
  | "not_found"
  | "wrong_password"
  | "reauth_required"
  | "too_many_attempts";

/** Result of {@linkcode removeUser}: `notified` is false when the notice could not be sent. */
export type RemoveUserResult = FlowResult<{ notified: boolean }, RemoveUserError>;

/**
 * Deletes the account, its OAuth identities and its codes, after the password or a session
 * issued less than `maxSessionAgeSeconds` (default 300) ago; then e-mails
 * `accountDeletedEmail`. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, removeUser } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await removeUser(db, {
 *   userId: "5d0c...",
 *   password: "correct horse battery staple",
 *   sendEmail: (mail) => console.log(mail.subject),
 * });
 * ```
 */
export function removeUser(db: D1Database, p: RemoveUserParams): Promise<RemoveUserResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const send = senderOf(o.sendEmail);
    iterationsOf(o.iterations);
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    const denied = await reauthError(db, user, o, now);
    if (denied) fail(denied);
    const { notified } = await deleteAccount(db, user, {
      send,
      render: o.renderAccountDeleted,
      appName: o.appName,
    });
    return { ok: true as const, notified };
  });
}

/** Result of {@linkcode getUser}. */
export type GetUserResult = FlowResult<{ user: User }, CommonError | "not_found">;

/**
 * Reads a user's public fields (for a signed-in page). Never throws.
 *
 * @example
 * ```ts
 * import { getUser, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await getUser(db, "5d0c...");
 * if (result.ok) console.log(result.user.email, result.user.name);
 * ```
 */
export function getUser(db: D1Database, userId: string): Promise<GetUserResult> {
  return guard(async () => {
    const id = stringOf(userId, 200);
    const row = await userById(db, id);
    if (!row) fail("not_found");
    return { ok: true as const, user: publicUser(row) };
  });
}
