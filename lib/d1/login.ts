/**
 * Password login. Unknown addresses and wrong passwords get the same answer after the same
 * work (a PBKDF2 verification against a dummy hash); the pending password of an unverified
 * account (its latest signup's) gets its own code, `email_not_verified`. A hash stored with
 * another cost than `iterations` (default the core's) is rehashed at that cost after a
 * successful login. Every try is counted first by the sign-in throttle (`throttle.ts`): per
 * account and client, per client and per account, the same for unknown addresses.
 *
 * @module
 */
import { hashPassword, needsRehash } from "../auth/password.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import { clientOf, iterationsOf, nowOf, params, passwordOf, secretOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import { normalizeEmail, normalizePassword } from "./policy.ts";
import { credentialsByEmail, verifyOrDummy } from "./users.ts";
import { run } from "./query.ts";
import { clearTries, signInBuckets, takeTry } from "./throttle.ts";
import type { Secrets } from "../auth/token.ts";
import { type SecondFactorNeeded, secondStep } from "./second_factor.ts";
import {
  accountIdOf,
  type AuthEventSink,
  report,
  reportOf,
  type Seen,
  signInEvent,
  sinkOf,
} from "./events.ts";

/** Parameters of {@linkcode login}. */
export interface LoginParams extends HashingOptions, ClockOptions {
  /** The account's e-mail address. */
  email: string;
  /** The password. */
  password: string;
  /**
   * Who is signing in, for the throttle: the client's IP address as the site sees it (behind
   * a proxy, the address the proxy reports), or a device id. Without it only the looser
   * account-wide bucket applies, which strangers can fill for the owner; pass it.
   */
  client?: string;
  /**
   * The site's `TOKEN_SECRET` (or a rotation list): signs the ticket of the second step when
   * the account has a second factor. Without it such an account answers
   * `second_factor_required` with no ticket, and cannot finish signing in.
   */
  secret?: Secrets;
  /** The device token of a browser trusted by `verifySecondFactor` (from its cookie). */
  trustedDevice?: string;
  /**
   * The whole site requires a second factor: an account without one answers
   * `second_factor_setup_required` and a ticket for the TOTP enrolment flows.
   */
  requireSecondFactor?: boolean;
  /** Receives the outcome's event (`sign_in.*`); see `AuthEvent`. */
  onEvent?: AuthEventSink;
}

/** Errors of {@linkcode login}. */
export type LoginError =
  | CommonError
  | "invalid_credentials"
  | "email_not_verified"
  | "too_many_attempts";

/**
 * Result of {@linkcode login}: the user to sign in, a failure, or — right password, but the
 * account has a second factor (or the site requires one) — the ticket of the second step.
 */
export type LoginResult = FlowResult<{ userId: string }, LoginError> | SecondFactorNeeded;

/**
 * Checks an e-mail and password. Never throws. A try refused by the throttle is
 * `too_many_attempts` with `retryAfter` seconds, and costs no password hashing.
 *
 * @example
 * ```ts
 * import { login, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await login(db, {
 *   email: "ada@example.com",
 *   password: "correct horse",
 *   client: "203.0.113.7", // the client's IP address
 * });
 * if (result.ok) console.log("user", result.userId);
 * else if (result.error === "too_many_attempts") console.log("wait", result.retryAfter, "s");
 * ```
 */
export async function login(db: D1Database, p: LoginParams): Promise<LoginResult> {
  const seen: Seen = { detail: { method: "password" } };
  const result = await guard(async (): Promise<LoginResult> => {
    const o = params(p);
    sinkOf(o.onEvent);
    // Options of the second step are refused before anything runs, not after the password.
    if (o.secret !== undefined) secretOf(o.secret);
    if (o.requireSecondFactor !== undefined && typeof o.requireSecondFactor !== "boolean") {
      fail("invalid_input");
    }
    if (o.trustedDevice !== undefined && typeof o.trustedDevice !== "string") {
      fail("invalid_input");
    }
    const password = normalizePassword(passwordOf(o.password));
    const iterations = iterationsOf(o.iterations);
    const now = nowOf(o.now);
    const client = clientOf(o.client);
    const email = normalizeEmail(o.email);
    // Unparseable addresses share one bucket ("-" is no address): they never sign anyone in.
    const account = email ?? "-";
    if (email) seen.email = email;
    await takeTry(db, signInBuckets(account, client), now);
    const user = email ? await credentialsByEmail(db, email) : null;
    const ok = await verifyOrDummy(password, user?.hash, iterations);
    if (user) seen.userId = user.id;
    if (!user || !ok) fail("invalid_credentials");
    await clearTries(db, "sign-in", account, client, now);
    if (!user.verified) fail("email_not_verified");
    const second = await secondStep(db, o, user, now);
    if (user.hash && needsRehash(user.hash, { iterations })) {
      try {
        const upgraded = await hashPassword(password, { iterations });
        await run(
          db,
          "UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ? AND password_hash = ?",
          [upgraded, now, user.id, user.hash],
        );
      } catch {
        // The login stands; the upgrade is retried next time.
      }
    }
    if (second) return second;
    return { ok: true as const, userId: user.id };
  });
  if (!result.ok && result.error === "too_many_attempts" && seen.email && reportOf(p).sink) {
    // The throttle answered before the account was read: its event still names the account.
    seen.userId = await accountIdOf(db, seen.email);
  }
  return await report(
    p,
    result,
    seen,
    signInEvent,
  );
}
