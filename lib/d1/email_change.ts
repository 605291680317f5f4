/**
 * Self-service e-mail change: `requestEmailChange` e-mails a confirmation link to the new
 * address; `confirmEmailChange` switches the address, marks it verified and sends a notice to
 * the old one. The link's token (purpose `gatehouse.email-change`, signed with `TOKEN_SECRET`)
 * holds the user id, the new address and the user's security stamp, so it works once and
 * fails after any password or e-mail change.
 *
 * When the new address already belongs to another verified account, the request answers the
 * same, after the same work, and sends nothing (no enumeration: the link to a free address is
 * sent after the answer, so the sender's time does not show); a confirmation that loses a race answers
 * `email_taken`. An unverified signup of the new address does not hold it: the confirmation
 * proves the inbox, so that signup (its pending password and codes) is discarded.
 *
 * @module
 */
import { type Secrets, signToken, verifyToken } from "../auth/token.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import {
  appNameOf,
  appUrlOf,
  emailOf,
  handoffOf,
  iterationsOf,
  linkTo,
  nowOf,
  params,
  secretOf,
  senderOf,
  stringOf,
  ttlOf,
} from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import type { DeliveryOptions, EmailSender, Renderer } from "./email.ts";
import { deliver, sendAfter } from "./email.ts";
import { emailChangedNoticeEmail, emailChangeEmail } from "./templates.ts";
import { newStamp, reauthError, type ReauthOptions, userByEmail, userById } from "./users.ts";
import { issueCode, releaseCode } from "./otp.ts";
import { batch, run, stmt } from "./query.ts";

/** Default lifetime of an e-mail-change link, in hours. */
export const EMAIL_CHANGE_TTL_HOURS = 24;
const PURPOSE = "gatehouse.email-change";

/** Parameters of {@linkcode requestEmailChange}. */
export interface RequestEmailChangeParams
  extends ReauthOptions, HashingOptions, ClockOptions, DeliveryOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The new address. */
  newEmail: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The site's e-mail sender. */
  sendEmail: EmailSender;
  /** The site's base URL, e.g. `https://example.com`. */
  appUrl: string;
  /** Path of the confirmation page under `appUrl` (default `/confirm-email`). */
  confirmPath?: string;
  /** Link lifetime in hours (default 24). */
  ttlHours?: number;
  /** Replaces the built-in `emailChangeEmail`. */
  renderEmailChange?: Renderer<
    { confirmUrl: string; newEmail: string; ttlHours: number; appName?: string }
  >;
  /** Site name for the templates. */
  appName?: string;
}

/** Errors of {@linkcode requestEmailChange}. */
export type RequestEmailChangeError =
  | CommonError
  | "not_found"
  | "invalid_email"
  | "same_email"
  | "wrong_password"
  | "reauth_required"
  | "too_many_attempts";

/** Result of {@linkcode requestEmailChange}. */
export type RequestEmailChangeResult = FlowResult<Record<never, never>, RequestEmailChangeError>;

/**
 * E-mails a confirmation link to the new address, after the password or a fresh session (as
 * for `removeUser`). At most one request per minute per account sends a link (a request for a
 * taken address counts too). It answers without waiting for the e-mail, which goes on after
 * the answer (`waitUntil` receives it; a failure goes to `onSendError` and lifts the
 * throttle). Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, requestEmailChange } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await requestEmailChange(db, {
 *   userId: "5d0c...",
 *   newEmail: "ada@new.example",
 *   password: "correct horse battery staple",
 *   secret: "TOKEN_SECRET value",
 *   sendEmail: (mail) => console.log(mail.to),
 *   appUrl: "https://example.com",
 * });
 * ```
 */
export function requestEmailChange(
  db: D1Database,
  p: RequestEmailChangeParams,
): Promise<RequestEmailChangeResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const secrets = secretOf(o.secret);
    const send = senderOf(o.sendEmail);
    const appUrl = appUrlOf(o.appUrl);
    const newEmail = emailOf(o.newEmail);
    const ttlHours = ttlOf(o.ttlHours, EMAIL_CHANGE_TTL_HOURS);
    iterationsOf(o.iterations);
    const handoff = handoffOf(o);
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    const denied = await reauthError(db, user, o, now);
    if (denied) fail(denied);
    if (newEmail === user.email) fail("same_email");
    const holder = await userByEmail(db, newEmail);
    const taken = holder !== null && Number(holder.email_verified) === 1;
    // The same statements and HMACs whether or not the address is taken; only the e-mail differs.
    if (!(await issueCode(db, { email: user.email, purpose: "email-change", secrets, now }))) {
      return { ok: true as const };
    }
    const token = await signToken(secrets, {
      purpose: PURPOSE,
      payload: { u: user.id, s: user.stamp, e: newEmail },
      ttlSeconds: ttlHours * 3600,
      now,
    });
    if (taken) return { ok: true as const };
    const confirmUrl = linkTo(appUrl, o.confirmPath, "/confirm-email", token);
    const delivery = deliver(send, newEmail, emailChangeEmail, o.renderEmailChange, {
      confirmUrl,
      newEmail,
      ttlHours,
      appName: appNameOf(o.appName),
    });
    sendAfter(
      handoff,
      "requestEmailChange",
      delivery,
      () => releaseCode(db, user.email, "email-change"),
    );
    return { ok: true as const };
  });
}

/** Parameters of {@linkcode confirmEmailChange}. */
export interface ConfirmEmailChangeParams extends EventOptions, ClockOptions {
  /** The token from the confirmation link. */
  token: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The site's e-mail sender, for the notice to the old address (none sent when omitted). */
  sendEmail?: EmailSender;
  /** Replaces the built-in `emailChangedNoticeEmail`. */
  renderEmailChangedNotice?: Renderer<{ newEmail: string; appName?: string }>;
  /** Site name for the templates. */
  appName?: string;
}

/** Errors of {@linkcode confirmEmailChange}. */
export type ConfirmEmailChangeError = CommonError | "invalid_token" | "email_taken";

/** Result of {@linkcode confirmEmailChange}. */
export type ConfirmEmailChangeResult = FlowResult<
  { userId: string; email: string; notified: boolean },
  ConfirmEmailChangeError
>;

/**
 * Switches the account to the confirmed address; the old address gets a notice. Never throws.
 *
 * @example
 * ```ts
 * import { confirmEmailChange, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await confirmEmailChange(db, { token: "from the link", secret: "s" });
 * if (!result.ok) console.log(result.error); // "invalid_token"
 * ```
 */
export async function confirmEmailChange(
  db: D1Database,
  p: ConfirmEmailChangeParams,
): Promise<ConfirmEmailChangeResult> {
  const seen: Seen = {};
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const secrets = secretOf(o.secret);
    const token = stringOf(o.token, 8192);
    const send = o.sendEmail === undefined ? undefined : senderOf(o.sendEmail);
    const now = nowOf(o.now);
    const claims = await verifyToken<{ u?: unknown; s?: unknown; e?: unknown }>(secrets, token, {
      purpose: PURPOSE,
      now,
    });
    const { u: id, s: stamp, e: newEmail } = claims?.payload ?? {};
    if (typeof id !== "string" || typeof stamp !== "string" || typeof newEmail !== "string") {
      fail("invalid_token");
    }
    const user = await userById(db, id);
    if (!user || user.stamp !== stamp) fail("invalid_token");
    // One transaction, each step only while the token's stamp is current: an unverified signup
    // of the new address is discarded (this link proved the inbox), then the address moves.
    const current = "EXISTS (SELECT 1 FROM users WHERE id = ? AND stamp = ?)";
    const [, , changed] = await batch(db, [
      stmt(
        db,
        `DELETE FROM users WHERE email = ? AND email_verified = 0 AND id <> ? AND ${current}`,
        newEmail,
        id,
        id,
        stamp,
      ),
      stmt(db, `DELETE FROM otp_codes WHERE email = ? AND ${current}`, newEmail, id, stamp),
      stmt(
        db,
        `UPDATE users SET email = ?, email_verified = 1, stamp = ?, updated_at = ?
         WHERE id = ? AND stamp = ?`,
        newEmail,
        newStamp(),
        now,
        id,
        stamp,
      ),
    ], "email_taken");
    if (changed !== 1) fail("invalid_token");
    await run(db, "DELETE FROM otp_codes WHERE email = ?", [user.email]);
    let notified = false;
    if (send) {
      try {
        await deliver(send, user.email, emailChangedNoticeEmail, o.renderEmailChangedNotice, {
          newEmail,
          appName: appNameOf(o.appName),
        });
        notified = true;
      } catch {
        notified = false;
      }
    }
    seen.email = newEmail;
    return { ok: true as const, userId: id, email: newEmail, notified };
  });
  return await report(p, result, seen, (r) => (r.ok ? "email.changed" : null));
}
