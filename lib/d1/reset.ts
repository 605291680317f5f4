/**
 * Password reset by e-mailed link. The link carries a token signed with `TOKEN_SECRET` for the
 * purpose `gatehouse.password-reset`, holding the user id and the user's security stamp. Using
 * it changes the stamp in the same UPDATE that sets the password (`WHERE stamp = ?`), so a
 * token works once, and tokens issued before any password or e-mail change fail.
 *
 * @module
 */
import { hashPassword } from "../auth/password.ts";
import { type Secrets, signToken, verifyToken } from "../auth/token.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import {
  appNameOf,
  appUrlOf,
  handoffOf,
  iterationsOf,
  linkTo,
  nowOf,
  params,
  passwordOf,
  secretOf,
  senderOf,
  stringOf,
  ttlOf,
} from "./input.ts";
import type { CommonError, FlowResult, PasswordError } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import type { DeliveryOptions, EmailSender, Renderer } from "./email.ts";
import { deliver, sendAfter } from "./email.ts";
import { passwordResetEmail } from "./templates.ts";
import { checkPassword, normalizeEmail, normalizePassword } from "./policy.ts";
import { OTP_RESEND_SECONDS } from "./otp.ts";
import { newStamp, userByEmail, userById } from "./users.ts";
import { run } from "./query.ts";
import { releaseSendSlot, resetTries, takeSendSlot } from "./throttle.ts";

/** Default lifetime of a reset link, in hours. */
export const RESET_TTL_HOURS = 1;
const PURPOSE = "gatehouse.password-reset";

/** Parameters of {@linkcode requestPasswordReset}. */
export interface RequestPasswordResetParams extends ClockOptions, DeliveryOptions {
  /** The account's e-mail address. */
  email: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The site's e-mail sender. */
  sendEmail: EmailSender;
  /** The site's base URL, e.g. `https://example.com`. */
  appUrl: string;
  /** Path of the reset page under `appUrl` (default `/reset-password`); `?token=` is added. */
  resetPath?: string;
  /** Link lifetime in hours (default 1). */
  ttlHours?: number;
  /** Replaces the built-in `passwordResetEmail`. */
  renderReset?: Renderer<{ resetUrl: string; ttlHours: number; appName?: string }>;
  /** Site name for the templates. */
  appName?: string;
}

/**
 * E-mails a reset link when the address has an account (at most one per minute). Always
 * resolves to `{ok:true}`: the answer never tells whether the account exists, and the flow
 * does the same work either way (one query for the account, one token signed, one write of
 * the address's one-link-a-minute slot). It answers without waiting for the e-mail, which goes
 * on after the answer (`waitUntil` receives it; a failure goes to `onSendError` and lifts the
 * slot), so the sender's time is never part of the answer's. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, requestPasswordReset } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await requestPasswordReset(db, {
 *   email: "ada@example.com",
 *   secret: "TOKEN_SECRET value",
 *   sendEmail: (mail) => console.log(mail.text),
 *   appUrl: "https://example.com",
 * });
 * ```
 */
export async function requestPasswordReset(
  db: D1Database,
  p: RequestPasswordResetParams,
): Promise<{ ok: true }> {
  await guard(async () => {
    const o = params(p);
    const secrets = secretOf(o.secret);
    const send = senderOf(o.sendEmail);
    const appUrl = appUrlOf(o.appUrl);
    const ttlHours = ttlOf(o.ttlHours, RESET_TTL_HOURS);
    const handoff = handoffOf(o);
    const now = nowOf(o.now);
    // From here to the send, the same statements and the same HMAC for every address.
    const email = normalizeEmail(o.email) ?? "-";
    const user = await userByEmail(db, email);
    const token = await signToken(secrets, {
      purpose: PURPOSE,
      payload: { u: user?.id ?? "", s: user?.stamp ?? "" },
      ttlSeconds: ttlHours * 3600,
      now,
    });
    const resetUrl = linkTo(appUrl, o.resetPath, "/reset-password", token);
    const due = await takeSendSlot(db, email, OTP_RESEND_SECONDS, now);
    if (!user || !due) return;
    const delivery = deliver(send, user.email, passwordResetEmail, o.renderReset, {
      resetUrl,
      ttlHours,
      appName: appNameOf(o.appName),
    });
    sendAfter(handoff, "requestPasswordReset", delivery, () => releaseSendSlot(db, email));
  });
  return { ok: true };
}

/** The account a reset token is for, or `invalid_token` (forged, expired, used, stale). */
async function userOfToken(db: D1Database, secrets: Secrets, token: string, now: number) {
  const claims = await verifyToken<{ u?: unknown; s?: unknown }>(secrets, token, {
    purpose: PURPOSE,
    now,
  });
  const id = claims?.payload?.u;
  const stamp = claims?.payload?.s;
  if (typeof id !== "string" || typeof stamp !== "string" || !id) fail("invalid_token");
  const user = await userById(db, id);
  if (!user || user.stamp !== stamp) fail("invalid_token");
  return { user, id, stamp };
}

/** Parameters of {@linkcode checkResetToken}. */
export interface CheckResetTokenParams extends ClockOptions {
  /** The token from the reset link. */
  token: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
}

/** Result of {@linkcode checkResetToken}. */
export type CheckResetTokenResult = FlowResult<
  Record<never, never>,
  CommonError | "invalid_token"
>;

/**
 * Tells whether a reset link still works, without using it: `{ok:true}` when
 * {@linkcode resetPassword} would accept its token now, `invalid_token` when it is forged,
 * expired, already used, or issued before the password or e-mail changed. A site checks it
 * when the link is opened, so a dead link says so at once instead of after the new password
 * is typed. Changes nothing; never throws.
 *
 * @example
 * ```ts
 * import { checkResetToken, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const token = new URL("https://example.com/reset-password?token=x").searchParams.get("token")!;
 * const link = await checkResetToken(db, { token, secret: "TOKEN_SECRET value" });
 * if (!link.ok) console.log("This link was used or has expired: ask for a new one.");
 * ```
 */
export function checkResetToken(
  db: D1Database,
  p: CheckResetTokenParams,
): Promise<CheckResetTokenResult> {
  return guard(async () => {
    const o = params(p);
    const secrets = secretOf(o.secret);
    const token = stringOf(o.token, 8192);
    await userOfToken(db, secrets, token, nowOf(o.now));
    return { ok: true as const };
  });
}

/** Parameters of {@linkcode resetPassword}. */
export interface ResetPasswordParams extends EventOptions, HashingOptions, ClockOptions {
  /** The token from the reset link. */
  token: string;
  /** The new password (NIST SP 800-63B policy). */
  newPassword: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** Site name, refused as a password. */
  appName?: string;
}

/** Errors of {@linkcode resetPassword}. */
export type ResetPasswordError = CommonError | "invalid_token" | PasswordError;

/** Result of {@linkcode resetPassword}. */
export type ResetPasswordResult = FlowResult<{ userId: string }, ResetPasswordError>;

/**
 * Sets a new password from a reset link's token; the token then stops working. Following the
 * link proves the address, so the account is marked verified, and provider sign-ins linked to
 * it without a proven e-mail are removed. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, resetPassword } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const token = new URL("https://example.com/reset-password?token=x").searchParams.get("token")!;
 * const result = await resetPassword(db, { token, newPassword: "a new long passphrase", secret: "s" });
 * if (!result.ok) console.log(result.error); // "invalid_token"
 * ```
 */
export async function resetPassword(
  db: D1Database,
  p: ResetPasswordParams,
): Promise<ResetPasswordResult> {
  const seen: Seen = { detail: { method: "reset" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const secrets = secretOf(o.secret);
    const token = stringOf(o.token, 8192);
    const password = normalizePassword(passwordOf(o.newPassword));
    const iterations = iterationsOf(o.iterations);
    const now = nowOf(o.now);
    const { user, id, stamp } = await userOfToken(db, secrets, token, now);
    const weak = checkPassword(password, { email: user.email, appName: appNameOf(o.appName) });
    if (weak) fail(weak);
    const hash = await hashPassword(password, { iterations });
    const changed = await run(
      db,
      `UPDATE users SET password_hash = ?, stamp = ?, email_verified = 1, updated_at = ?
       WHERE id = ? AND stamp = ?`,
      [hash, newStamp(), now, id, stamp],
    );
    if (changed !== 1) fail("invalid_token");
    // A signup code still pending for this address must not set another password later.
    await run(db, "DELETE FROM otp_codes WHERE email = ? AND purpose = 'signup'", [user.email]);
    // Provider links made on this address without proof (see `findOrCreateOAuthUser`) go.
    await run(db, "DELETE FROM oauth_identities WHERE user_id = ? AND email IS NULL", [id]);
    // The inbox was proved: sign-in, code and re-authentication throttles start over.
    await resetTries(db, user.email, now);
    return { ok: true as const, userId: id };
  });
  return await report(p, result, seen, (r) => (r.ok ? "password.changed" : null));
}
