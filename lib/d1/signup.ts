/**
 * Signup with a one-time code: `signup` creates an unverified user, e-mails a code and answers
 * the signup's `attempt`; `verifyOtp` checks the code together with the attempt and marks the
 * address verified with that signup's password; `resendOtp` sends a fresh code for an attempt.
 *
 * A verification only confirms the password of whoever holds both the inbox (the code) and
 * the browser that signed up (the attempt), see `attempt.ts`. Signing up with an address that
 * already has a verified account answers exactly like a new signup (same work, same result,
 * an attempt that verifies nothing) and e-mails the owner a notice instead of a code. An
 * unverified account holds no password until a verification confirms one.
 *
 * @module
 */
import { hashPassword } from "../auth/password.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import {
  appNameOf,
  clientOf,
  emailOf,
  handoffOf,
  iterationsOf,
  nowOf,
  params,
  passwordOf,
  secretOf,
  senderOf,
  signingSecret,
  stringOf,
} from "./input.ts";
import type { CommonError, FlowResult, PasswordError } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database, D1PreparedStatement, D1Result } from "./types.ts";
import type { DeliveryOptions, EmailSender, Handoff, Renderer } from "./email.ts";
import { deliver, sendAfter } from "./email.ts";
import { accountExistsEmail, otpEmail } from "./templates.ts";
import { checkPassword, normalizePassword } from "./policy.ts";
import {
  codeMac,
  consumeCode,
  generateCode,
  OTP_RESEND_SECONDS,
  OTP_TTL_MINUTES,
  releaseCode,
} from "./otp.ts";
import {
  attemptFor,
  attemptMatches,
  decoyAttempt,
  renewSignupCode,
  SIGNUP,
  signupAttemptStatement,
} from "./attempt.ts";
import { newStamp, newUserId, userByEmail } from "./users.ts";
import { batchResults, run, stmt } from "./query.ts";
import { clearTries, takeTry, THROTTLE } from "./throttle.ts";
import type { Secrets } from "../auth/token.ts";
import { type SecondFactorNeeded, secondStep } from "./second_factor.ts";
import {
  accountIdOf,
  type EventOptions,
  report,
  reportOf,
  type Seen,
  signInEvent,
  sinkOf,
} from "./events.ts";

/** Purpose of "account exists" notices (throttled like codes). */
const NOTICE = "signup-notice";

/** Parameters of {@linkcode signup}. */
export interface SignupParams extends HashingOptions, ClockOptions, DeliveryOptions {
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

/**
 * Result of {@linkcode signup}: the same for new and existing addresses. `attempt` identifies
 * this signup: keep it in the browser that signed up (e.g. an HttpOnly cookie) and pass it to
 * {@linkcode verifyOtp} and {@linkcode resendOtp}; it is not shown to the user.
 */
export type SignupResult = FlowResult<{ attempt: string }, SignupError>;

/**
 * Creates an unverified user and e-mails a 6-digit code. Never throws. The latest signup of an
 * unverified address wins: its password becomes the pending one and earlier codes stop
 * working; inside the resend throttle (`OTP_RESEND_SECONDS`) no e-mail is sent, and the code
 * comes with {@linkcode resendOtp} once the throttle allows. It answers without waiting for
 * the e-mail (the code, or the notice to an existing account's owner): it goes on after the
 * answer (`waitUntil` receives it; a failure goes to `onSendError` and lifts the throttle).
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
 * if (result.ok) console.log("keep in an HttpOnly cookie:", result.attempt);
 * else console.log(result.error);
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
    const handoff = handoffOf(o);
    const now = nowOf(o.now);
    const weak = checkPassword(password, { email, appName });
    if (weak) fail(weak);
    // Hash first in every case: new and existing addresses cost the same.
    const hash = await hashPassword(password, { iterations });
    // Both codes' HMACs in every case; one is stored, the other never leaves this function.
    const code = generateCode();
    const signingKey = signingSecret(secrets);
    const codeHash = await codeMac(signingKey, SIGNUP, email, code, hash);
    const noticeHash = await codeMac(signingKey, NOTICE, email, code);
    // One transaction (one round trip) of the same statements for every address, which writes
    // a row and commits once: the user when the address is new (the unique index decides who
    // creates it, so concurrent signups create one), then the pending password of an
    // unverified account (a new one included) or the notice's slot of a verified one; both
    // are written inside the resend throttle too. Then which it was.
    const [, pending, notice, found] = await batchResults(db, [
      stmt(
        db,
        `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at)
         VALUES (?, ?, NULL, 0, ?, ?, ?) ON CONFLICT DO NOTHING`,
        newUserId(),
        email,
        newStamp(),
        now,
        now,
      ),
      signupAttemptStatement(db, { email, pendingHash: hash, mac: codeHash, now }),
      noticeStatement(db, { email, mac: noticeHash, now }),
      stmt(db, `SELECT email_verified FROM users WHERE email = ?`, email),
    ]);
    const user = found?.results?.[0] as { email_verified?: unknown } | undefined;
    if (!user) fail("db_error");
    if (Number(user.email_verified) === 1) {
      const attempt = await decoyAttempt(secrets, email);
      if (storedHash(notice) === noticeHash) {
        const mail = deliver(send, email, accountExistsEmail, o.renderAccountExists, { appName });
        sendAfter(handoff, "signup", mail, () => releaseCode(db, email, NOTICE));
      }
      return { ok: true as const, attempt };
    }
    const attempt = await attemptFor(secrets, email, hash);
    if (storedHash(pending) === codeHash) {
      sendCode(db, handoff, "signup", { send, email, code, render: o.renderOtp, appName });
    }
    return { ok: true as const, attempt };
  });
}

/** The `code_hash` a statement's RETURNING gave, or null when it wrote no row. */
function storedHash(r: D1Result | undefined): string | null {
  const row = r?.results?.[0] as { code_hash?: unknown } | undefined;
  return typeof row?.code_hash === "string" ? row.code_hash : null;
}

/**
 * The statement that records an "account exists" notice for a verified account's address (and
 * writes nothing for another): its row is written in every case, as the signup of an
 * unverified address writes its pending password; its slot (a code HMAC that is never sent,
 * its time) is renewed unless a notice went out less than `OTP_RESEND_SECONDS` ago. Returns
 * the stored `code_hash`: `mac` when the notice is to be e-mailed.
 */
function noticeStatement(
  db: D1Database,
  o: { email: string; mac: string; now: number },
): D1PreparedStatement {
  const due = o.now - OTP_RESEND_SECONDS * 1000;
  return stmt(
    db,
    `INSERT INTO otp_codes (email, purpose, code_hash, password_hash, attempts, sent_at, expires_at)
     SELECT ?, '${NOTICE}', ?, NULL, 0, ?, ?
     WHERE EXISTS (SELECT 1 FROM users WHERE email = ? AND email_verified = 1)
     ON CONFLICT (email, purpose) DO UPDATE SET
       password_hash = NULL,
       code_hash = CASE WHEN otp_codes.sent_at <= ? THEN excluded.code_hash ELSE otp_codes.code_hash END,
       attempts = CASE WHEN otp_codes.sent_at <= ? THEN 0 ELSE otp_codes.attempts END,
       expires_at = CASE WHEN otp_codes.sent_at <= ? THEN excluded.expires_at ELSE otp_codes.expires_at END,
       sent_at = CASE WHEN otp_codes.sent_at <= ? THEN excluded.sent_at ELSE otp_codes.sent_at END
     RETURNING code_hash`,
    o.email,
    o.mac,
    o.now,
    o.now + OTP_TTL_MINUTES * 60_000,
    o.email,
    due,
    due,
    due,
    due,
  );
}

/** E-mails a signup code after the answer; a failed send lifts the code's resend throttle. */
function sendCode(
  db: D1Database,
  handoff: Handoff,
  flow: string,
  m: { send: EmailSender; email: string; code: string; render: unknown; appName?: string },
): void {
  const vars = { code: m.code, ttlMinutes: OTP_TTL_MINUTES, appName: m.appName };
  const delivery = deliver(m.send, m.email, otpEmail, m.render, vars);
  sendAfter(handoff, flow, delivery, () => releaseCode(db, m.email, SIGNUP));
}

/** Parameters of {@linkcode verifyOtp}. */
export interface VerifyOtpParams extends EventOptions, ClockOptions {
  /** The address the code was sent to. */
  email: string;
  /** The 6-digit code (spaces are ignored). */
  code: string;
  /** The `attempt` that {@linkcode signup} answered, kept by the browser that signed up. */
  attempt: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The client's IP address or a device id, for the event (at most 200 characters). */
  client?: string;
  /**
   * The whole site requires a second factor (as `login`'s `requireSecondFactor`): the new
   * account, verified all the same, answers `second_factor_setup_required` and a ticket for
   * the TOTP enrolment flows instead of signing in.
   */
  requireSecondFactor?: boolean;
}

/** Errors of {@linkcode verifyOtp}. */
export type VerifyOtpError =
  | CommonError
  | "invalid_email"
  | "invalid_code"
  | "expired_code"
  | "too_many_attempts";

/**
 * Result of {@linkcode verifyOtp}: the user to sign in, a failure, or — on a site that
 * requires a second factor — the verified account's ticket to set one up.
 */
export type VerifyOtpResult = FlowResult<{ userId: string }, VerifyOtpError> | SecondFactorNeeded;

/**
 * Checks a signup code with the signup's attempt and marks the address verified with the
 * password of that signup. At most 5 tries per code, and 10 wrong codes per address before
 * the throttle asks to wait (`too_many_attempts` with `retryAfter`); a code works once; a code
 * sent for another signup of the address, or a wrong attempt, is `invalid_code`. With
 * `requireSecondFactor` the account is verified but not signed in: it answers
 * `second_factor_setup_required` and the ticket of the enrolment. The outcome reaches
 * `onEvent` as a sign-in (`sign_in.succeeded` with `method: "signup_code"`,
 * `sign_in.failed`, `sign_in.throttled`). Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, verifyOtp } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const attempt = "from the signup's cookie";
 * const result = await verifyOtp(db, { email: "ada@example.com", code: "123456", attempt, secret: "s" });
 * if (result.ok) console.log("signed up", result.userId);
 * ```
 */
export async function verifyOtp(db: D1Database, p: VerifyOtpParams): Promise<VerifyOtpResult> {
  const seen: Seen = { detail: { method: "signup_code" } };
  const result = await guard(async (): Promise<VerifyOtpResult> => {
    const o = params(p);
    sinkOf(o.onEvent);
    clientOf(o.client);
    if (o.requireSecondFactor !== undefined && typeof o.requireSecondFactor !== "boolean") {
      fail("invalid_input");
    }
    const secrets = secretOf(o.secret);
    const email = emailOf(o.email);
    const code = stringOf(o.code, 64).replace(/\s+/g, "");
    const attempt = stringOf(o.attempt, 256);
    const now = nowOf(o.now);
    seen.email = email;
    // Wrong codes of an address, over all its codes: 10, then waits (each code has 5 tries).
    await takeTry(db, [{ kind: "code", account: email, client: "", free: THROTTLE.code }], now);
    const pending = await consumeCode(db, {
      email,
      purpose: SIGNUP,
      code,
      secrets,
      now,
      attempt: (hash) => attemptMatches(secrets, email, hash, attempt),
    });
    if (!pending) fail("invalid_code");
    // Only an account still unverified: a reset or an OAuth sign-in that verified it first wins.
    const changed = await run(
      db,
      `UPDATE users SET email_verified = 1, password_hash = ?, stamp = ?, updated_at = ?
       WHERE email = ? AND email_verified = 0`,
      [pending, newStamp(), now, email],
    );
    if (changed !== 1) fail("invalid_code");
    await clearTries(db, "code", email, "", now);
    const user = await userByEmail(db, email);
    if (!user) fail("invalid_code");
    seen.userId = user.id;
    const second = await secondStep(db, o, user, now);
    if (second) return second;
    return { ok: true as const, userId: user.id };
  });
  if (
    !result.ok && result.error !== "invalid_input" && !seen.userId && seen.email &&
    reportOf(p).sink
  ) {
    seen.userId = await accountIdOf(db, seen.email);
  }
  return await report(
    p,
    result,
    seen,
    signInEvent,
  );
}

/** Parameters of {@linkcode resendOtp}. */
export interface ResendOtpParams extends ClockOptions, DeliveryOptions {
  /** The address to send a fresh code to. */
  email: string;
  /** The `attempt` that {@linkcode signup} answered, kept by the browser that signed up. */
  attempt: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The site's e-mail sender. */
  sendEmail: EmailSender;
  /** Replaces the built-in `otpEmail`. */
  renderOtp?: Renderer<{ code: string; ttlMinutes: number; appName?: string }>;
  /** Site name for the templates. */
  appName?: string;
}

/** Result of {@linkcode resendOtp}: `{ok:true}` whether or not a code was sent. */
export type ResendOtpResult = FlowResult<Record<never, never>, "invalid_input" | "invalid_email">;

/**
 * Sends a fresh code for a pending signup, when `attempt` is that address's current signup
 * (throttled to one per `OTP_RESEND_SECONDS`; the previous code stops working). Answers
 * `{ok:true}` whether or not the address has an account or a code was sent, without waiting
 * for the e-mail (as `signup`); an error only for missing or malformed parameters. Never
 * throws.
 *
 * @example
 * ```ts
 * import { openLibsql, resendOtp } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const attempt = "from the signup's cookie";
 * await resendOtp(db, { email: "ada@example.com", attempt, secret: "s", sendEmail: console.log });
 * ```
 */
export async function resendOtp(db: D1Database, p: ResendOtpParams): Promise<ResendOtpResult> {
  const input = await guard(() => {
    const o = params(p);
    return Promise.resolve({
      ok: true as const,
      secrets: secretOf(o.secret),
      send: senderOf(o.sendEmail),
      email: emailOf(o.email),
      attempt: stringOf(o.attempt, 256),
      now: nowOf(o.now),
      render: o.renderOtp,
      appName: appNameOf(o.appName),
      handoff: handoffOf(o),
    });
  });
  if (!input.ok) {
    return {
      ok: false,
      error: input.error === "invalid_email" ? "invalid_email" : "invalid_input",
    };
  }
  const { email, send } = input;
  // Whatever happens from here (no account, throttled, a failed send), the answer is the same.
  await guard(async () => {
    const user = await userByEmail(db, email);
    if (!user || Number(user.email_verified) === 1) return;
    const code = await renewSignupCode(db, input);
    if (code) {
      sendCode(db, input.handoff, "resendOtp", {
        send,
        email,
        code,
        render: input.render,
        appName: input.appName,
      });
    }
  });
  return { ok: true };
}
