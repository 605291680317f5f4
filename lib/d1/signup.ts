/**
 * Signup with a one-time code: `signup` creates an unverified user and e-mails a code;
 * `verifyOtp` checks it and marks the address verified; `resendOtp` sends a fresh code.
 *
 * Signing up with an address that already has a verified account answers exactly like a new
 * signup (same work, same result) and e-mails the owner a notice instead of a code. Signing up
 * again with an unverified address sends a new code (throttled); verifying a code sets the
 * password of the signup that code was sent for.
 *
 * @module
 */
import { hashPassword } from "../auth/password.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import {
  appNameOf,
  emailOf,
  iterationsOf,
  nowOf,
  params,
  passwordOf,
  secretOf,
  senderOf,
  stringOf,
} from "./input.ts";
import type { CommonError, FlowResult, PasswordError } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import type { EmailSender, Renderer } from "./email.ts";
import { deliver } from "./email.ts";
import { accountExistsEmail, otpEmail } from "./templates.ts";
import { checkPassword, normalizePassword } from "./policy.ts";
import { consumeCode, issueCode, OTP_TTL_MINUTES, releaseCode } from "./otp.ts";
import { newStamp, newUserId, userByEmail } from "./users.ts";
import { first, run } from "./query.ts";
import type { Secrets } from "../auth/token.ts";

/** Purpose of signup codes in `otp_codes`. */
const SIGNUP = "signup";
/** Purpose of "account exists" notices (throttled like codes). */
const NOTICE = "signup-notice";

/** Parameters of {@linkcode signup}. */
export interface SignupParams extends HashingOptions, ClockOptions {
  /** The new account's e-mail address. */
  email: string;
  /** The new password (NIST SP 800-63B policy, see `checkPassword`). */
  password: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The site's e-mail sender. */
  sendEmail: EmailSender;
  /** Replaces the built-in `otpEmail`. */
  renderOtp?: Renderer<{ code: string; ttlMinutes: number; appName?: string }>;
  /** Replaces the built-in `accountExistsEmail` (the notice for an existing account). */
  renderAccountExists?: Renderer<{ appName?: string }>;
  /** Site name for the templates. */
  appName?: string;
}

/** Errors of {@linkcode signup}. */
export type SignupError = CommonError | "invalid_email" | PasswordError;

/** Result of {@linkcode signup}: the same for new and existing addresses. */
export type SignupResult = FlowResult<Record<never, never>, SignupError>;

/**
 * Creates an unverified user and e-mails a 6-digit code. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, signup } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await signup(db, {
 *   email: "ada@example.com",
 *   password: "correct horse battery staple",
 *   secret: "TOKEN_SECRET value",
 *   sendEmail: (mail) => console.log(mail.to, mail.subject),
 * });
 * if (!result.ok) console.log(result.error);
 * ```
 */
export function signup(db: D1Database, p: SignupParams): Promise<SignupResult> {
  return guard(async () => {
    const o = params(p);
    const secrets = secretOf(o.secret);
    const send = senderOf(o.sendEmail);
    const email = emailOf(o.email);
    const appName = appNameOf(o.appName);
    const password = normalizePassword(passwordOf(o.password));
    const iterations = iterationsOf(o.iterations);
    const now = nowOf(o.now);
    const weak = checkPassword(password, { email, appName });
    if (weak) fail(weak);
    // Hash first in every case: new and existing addresses cost the same.
    const hash = await hashPassword(password, { iterations });
    // The unique index decides who creates the user: concurrent signups create one.
    await run(
      db,
      `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at)
       VALUES (?, ?, ?, 0, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [newUserId(), email, hash, newStamp(), now, now],
    );
    const user = await userByEmail(db, email);
    if (!user) fail("db_error");
    if (Number(user.email_verified) === 1) {
      if (await issueCode(db, { email, purpose: NOTICE, secrets, now })) {
        try {
          await deliver(send, email, accountExistsEmail, o.renderAccountExists, { appName });
        } catch (e) {
          await releaseCode(db, email, NOTICE);
          throw e;
        }
      }
      return { ok: true as const };
    }
    const code = await issueCode(db, { email, purpose: SIGNUP, secrets, now, pendingHash: hash });
    if (code) await sendCode(db, send, email, code, o.renderOtp, appName);
    return { ok: true as const };
  });
}

async function sendCode(
  db: D1Database,
  send: EmailSender,
  email: string,
  code: string,
  render: unknown,
  appName: string | undefined,
): Promise<void> {
  try {
    await deliver(send, email, otpEmail, render, { code, ttlMinutes: OTP_TTL_MINUTES, appName });
  } catch (e) {
    await releaseCode(db, email, SIGNUP);
    throw e;
  }
}

/** Parameters of {@linkcode verifyOtp}. */
export interface VerifyOtpParams extends ClockOptions {
  /** The address the code was sent to. */
  email: string;
  /** The 6-digit code (spaces are ignored). */
  code: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
}

/** Errors of {@linkcode verifyOtp}. */
export type VerifyOtpError =
  | CommonError
  | "invalid_email"
  | "invalid_code"
  | "expired_code"
  | "too_many_attempts";

/** Result of {@linkcode verifyOtp}. */
export type VerifyOtpResult = FlowResult<{ userId: string }, VerifyOtpError>;

/**
 * Checks a signup code and marks the address verified. At most 5 tries per code; a code
 * works once. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, verifyOtp } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await verifyOtp(db, { email: "ada@example.com", code: "123456", secret: "s" });
 * if (result.ok) console.log("signed up", result.userId);
 * ```
 */
export function verifyOtp(db: D1Database, p: VerifyOtpParams): Promise<VerifyOtpResult> {
  return guard(async () => {
    const o = params(p);
    const secrets = secretOf(o.secret);
    const email = emailOf(o.email);
    const code = stringOf(o.code, 64).replace(/\s+/g, "");
    const now = nowOf(o.now);
    const pending = await consumeCode(db, { email, purpose: SIGNUP, code, secrets, now });
    const changed = await run(
      db,
      `UPDATE users SET email_verified = 1, password_hash = COALESCE(?, password_hash),
         stamp = ?, updated_at = ? WHERE email = ?`,
      [pending, newStamp(), now, email],
    );
    if (changed !== 1) fail("invalid_code");
    const user = await userByEmail(db, email);
    if (!user) fail("invalid_code");
    return { ok: true as const, userId: user.id };
  });
}

/** Parameters of {@linkcode resendOtp}. */
export interface ResendOtpParams extends ClockOptions {
  /** The address to send a fresh code to. */
  email: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The site's e-mail sender. */
  sendEmail: EmailSender;
  /** Replaces the built-in `otpEmail`. */
  renderOtp?: Renderer<{ code: string; ttlMinutes: number; appName?: string }>;
  /** Site name for the templates. */
  appName?: string;
}

/**
 * Sends a fresh signup code to an unverified address (throttled to one per
 * `OTP_RESEND_SECONDS`; the previous code stops working). Always `{ok:true}`, whether or not
 * the address has an account. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, resendOtp } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await resendOtp(db, { email: "ada@example.com", secret: "s", sendEmail: console.log });
 * ```
 */
export async function resendOtp(db: D1Database, p: ResendOtpParams): Promise<{ ok: true }> {
  await guard(async () => {
    const o = params(p);
    const secrets = secretOf(o.secret);
    const send = senderOf(o.sendEmail);
    const email = emailOf(o.email);
    const now = nowOf(o.now);
    const user = await userByEmail(db, email);
    if (!user || Number(user.email_verified) === 1) return;
    // Keep the password of the signup this address is waiting on.
    const row = await first<{ password_hash: string | null }>(
      db,
      "SELECT password_hash FROM otp_codes WHERE email = ? AND purpose = ?",
      email,
      SIGNUP,
    );
    const code = await issueCode(db, {
      email,
      purpose: SIGNUP,
      secrets,
      now,
      pendingHash: row?.password_hash ?? user.password_hash,
    });
    if (code) await sendCode(db, send, email, code, o.renderOtp, appNameOf(o.appName));
  });
  return { ok: true };
}
