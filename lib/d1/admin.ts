/**
 * What an operator does to other people's accounts, with the same rules as the flows they
 * would run themselves: grant or withdraw administration (`users.is_admin`) without ever
 * leaving the site with no administrator, delete an account with the effects of
 * `removeUser`, and send a fresh signup code to an unverified address. Signing someone out
 * everywhere is the flows' own `signOutEverywhere`.
 *
 * These functions do not check who calls them: the site checks that the caller is an
 * administrator before calling (see the reference app's console).
 *
 * @module
 */
import type { Secrets } from "../auth/token.ts";
import type { ClockOptions } from "./input.ts";
import { appNameOf, nowOf, params, secretOf, senderOf, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import type { EmailSender, Renderer } from "./email.ts";
import { deliver } from "./email.ts";
import { otpEmail } from "./templates.ts";
import { publicUser, type User, userById } from "./users.ts";
import { first, run } from "./query.ts";
import { deleteAccount } from "./remove.ts";
import { attemptFor, renewSignupCode, SIGNUP } from "./attempt.ts";
import { OTP_RESEND_SECONDS, OTP_TTL_MINUTES, releaseCode } from "./otp.ts";

/** Parameters of {@linkcode setAdmin}. */
export interface SetAdminParams extends ClockOptions {
  /** The user to change. */
  userId: string;
  /** True to make the user an administrator, false to withdraw it. */
  admin: boolean;
  /**
   * Refuse (`last_admin`) to withdraw the last administrator's right. Default true; a site
   * whose owners are admitted another way (an allowlist) may pass false.
   */
  keepOne?: boolean;
}

/** Result of {@linkcode setAdmin}: the user as stored now; `changed` is false for a repeat. */
export type SetAdminResult = FlowResult<
  { user: User; changed: boolean },
  CommonError | "not_found" | "last_admin"
>;

/**
 * Grants or withdraws administration. Withdrawing it from the last administrator is refused
 * with `last_admin` (unless `keepOne: false`), checked in the same statement as the change,
 * so two administrators withdrawing each other at once leave one. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, setAdmin } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await setAdmin(db, { userId: "5d0c...", admin: false });
 * if (!result.ok && result.error === "last_admin") console.log("promote someone else first");
 * ```
 */
export function setAdmin(db: D1Database, p: SetAdminParams): Promise<SetAdminResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    if (typeof o.admin !== "boolean") fail("invalid_input");
    if (o.keepOne !== undefined && typeof o.keepOne !== "boolean") fail("invalid_input");
    const keepOne = o.keepOne !== false;
    const now = nowOf(o.now);
    const changed = o.admin
      ? await run(
        db,
        "UPDATE users SET is_admin = 1, updated_at = ? WHERE id = ? AND is_admin <> 1",
        [now, userId],
      )
      : await run(
        db,
        `UPDATE users SET is_admin = 0, updated_at = ? WHERE id = ? AND is_admin = 1
         AND (? = 0 OR EXISTS (SELECT 1 FROM users WHERE is_admin = 1 AND id <> ?))`,
        [now, userId, keepOne ? 1 : 0, userId],
      );
    const row = await userById(db, userId);
    if (!row) fail("not_found");
    if (changed !== 1 && Number(row.is_admin) === 1 && !o.admin) fail("last_admin");
    return { ok: true as const, user: publicUser(row), changed: changed === 1 };
  });
}

/** Parameters of {@linkcode adminRemoveUser}. */
export interface AdminRemoveUserParams {
  /** The user to delete. */
  userId: string;
  /** The site's e-mail sender (for the `accountDeletedEmail` notice). */
  sendEmail: EmailSender;
  /** Replaces the built-in `accountDeletedEmail`. */
  renderAccountDeleted?: Renderer<{ email?: string; appName?: string }>;
  /** Site name for the templates. */
  appName?: string;
  /** Refuse (`last_admin`) to delete the last administrator. Default true. */
  keepOne?: boolean;
}

/** Result of {@linkcode adminRemoveUser}: `user` as it was; `notified` as in `removeUser`. */
export type AdminRemoveUserResult = FlowResult<
  { user: User; notified: boolean },
  CommonError | "not_found" | "last_admin"
>;

/**
 * Deletes an account on an operator's behalf, with the same effects as `removeUser` (its
 * OAuth identities and codes go, its sessions stop verifying, the owner gets the
 * `accountDeletedEmail` notice) but without the owner's re-authentication. The last
 * administrator is kept (`last_admin`) unless `keepOne: false`, checked in the same
 * transaction as the deletion (every statement of it carries the condition), so two
 * administrators deleting or demoting each other at once leave one. Never throws.
 *
 * @example
 * ```ts
 * import { adminRemoveUser, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await adminRemoveUser(db, {
 *   userId: "5d0c...",
 *   sendEmail: (mail) => console.log(mail.to, mail.subject),
 * });
 * ```
 */
export function adminRemoveUser(
  db: D1Database,
  p: AdminRemoveUserParams,
): Promise<AdminRemoveUserResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const send = senderOf(o.sendEmail);
    if (o.keepOne !== undefined && typeof o.keepOne !== "boolean") fail("invalid_input");
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    // The last-administrator check is part of the deleting statements (see deleteAccount).
    const { notified } = await deleteAccount(db, user, {
      send,
      render: o.renderAccountDeleted,
      appName: o.appName,
      keepAdmin: o.keepOne !== false,
    });
    return { ok: true as const, user: publicUser(user), notified };
  });
}

/** Parameters of {@linkcode resendVerification}. */
export interface ResendVerificationParams extends ClockOptions {
  /** The unverified user. */
  userId: string;
  /** The site's `TOKEN_SECRET` (or a rotation list), as given to `signup`. */
  secret: Secrets;
  /** The site's e-mail sender. */
  sendEmail: EmailSender;
  /** Replaces the built-in `otpEmail`. */
  renderOtp?: Renderer<{ code: string; ttlMinutes: number; appName?: string }>;
  /** Site name for the templates. */
  appName?: string;
}

/** Result of {@linkcode resendVerification}. */
export type ResendVerificationResult = FlowResult<
  { email: string },
  CommonError | "not_found" | "already_verified" | "expired_code" | "too_many_attempts"
>;

/**
 * E-mails a fresh code for an unverified user's pending signup. The code verifies only
 * together with that signup's attempt, which the browser that signed up keeps: an operator
 * can help someone whose code got lost, never verify an address on their behalf. Errors:
 * `already_verified`; `expired_code` when no signup is pending any more (the person signs up
 * again); `too_many_attempts` with `retryAfter` inside the resend throttle
 * (`OTP_RESEND_SECONDS`). Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, resendVerification } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await resendVerification(db, {
 *   userId: "5d0c...",
 *   secret: "TOKEN_SECRET value",
 *   sendEmail: (mail) => console.log(mail.to, mail.subject),
 * });
 * ```
 */
export function resendVerification(
  db: D1Database,
  p: ResendVerificationParams,
): Promise<ResendVerificationResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const secrets = secretOf(o.secret);
    const send = senderOf(o.sendEmail);
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    if (Number(user.email_verified) === 1) fail("already_verified");
    const pending = await first<{ password_hash: string | null; sent_at: number }>(
      db,
      `SELECT password_hash, sent_at FROM otp_codes WHERE email = ? AND purpose = '${SIGNUP}'`,
      user.email,
    );
    if (!pending || typeof pending.password_hash !== "string" || !pending.password_hash) {
      fail("expired_code");
    }
    const wait = Number(pending.sent_at) + OTP_RESEND_SECONDS * 1000 - now;
    if (wait > 0) fail("too_many_attempts", Math.ceil(wait / 1000));
    const attempt = await attemptFor(secrets, user.email, pending.password_hash);
    const code = await renewSignupCode(db, { email: user.email, attempt, secrets, now });
    // Null here: a signup or a resend got in between; its own code is on the way.
    if (!code) fail("too_many_attempts", OTP_RESEND_SECONDS);
    try {
      await deliver(send, user.email, otpEmail, o.renderOtp, {
        code,
        ttlMinutes: OTP_TTL_MINUTES,
        appName: appNameOf(o.appName),
      });
    } catch (e) {
      await releaseCode(db, user.email, SIGNUP);
      throw e;
    }
    return { ok: true as const, email: user.email };
  });
}
