/**
 * Linking OAuth sign-ins to users: one row per (provider, provider user id) in
 * `oauth_identities`. A first sign-in with a provider-verified e-mail links to the account with
 * that address, or creates a verified account without a password. Linking to an account whose
 * address was never verified drops its password: the provider proved who owns the mailbox, and
 * a password set by someone else before must not keep working.
 *
 * An e-mail the provider does not prove (`emailVerified: false`, e.g. Microsoft without
 * `xms_edov`) never reaches an account by its address: the identity is linked only to a new
 * account, when no account has that address, and is kept with no e-mail (`email` NULL) as the
 * mark of a link made without proof. Whoever later proves the inbox (a provider-verified link
 * or a reset link) takes the account without those links, so an identity that merely claimed
 * the address first cannot keep a way in.
 *
 * A provider is one factor, like a password: an account with a second factor (a confirmed
 * TOTP) is asked for it after the provider too, unless the browser is a remembered device, and
 * with `requireSecondFactor` an account without one sets it up first (`secondStep`, as for
 * `login`).
 *
 * @module
 */
import type { Secrets } from "../auth/token.ts";
import type { ClockOptions } from "./input.ts";
import { clientOf, nowOf, params, secretOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import { normalizeEmail } from "./policy.ts";
import { newStamp, newUserId, userByEmail } from "./users.ts";
import { first, run } from "./query.ts";
import {
  accountIdOf,
  type EventOptions,
  report,
  reportOf,
  type Seen,
  signInEvent,
  sinkOf,
} from "./events.ts";
import { type SecondFactorNeeded, secondStep } from "./second_factor.ts";

/** Parameters of {@linkcode findOrCreateOAuthUser}. */
export interface OAuthUserParams extends EventOptions, ClockOptions {
  /** Provider id, e.g. `google`, `github`, `microsoft` (lowercase letters, digits, `-`, `_`). */
  provider: string;
  /** The provider's id for the user (numbers are turned into strings). */
  providerUserId: string | number;
  /** The e-mail the provider returned. */
  email: string;
  /**
   * Whether the provider proved that e-mail. `false`: the identity only follows an existing
   * link or gets a new account (`email_unverified` when an account has the address); any
   * value other than `true` or `false` is `email_unverified`.
   */
  emailVerified: boolean;
  /** The client's IP address or a device id, for the event (at most 200 characters). */
  client?: string;
  /**
   * The site's `TOKEN_SECRET` (or a rotation list): signs the ticket of the second step when
   * the account has a second factor (as `login`'s). Without it such an account answers
   * `second_factor_required` with no ticket, and cannot finish signing in.
   */
  secret?: Secrets;
  /** The device token of a browser trusted by `verifySecondFactor` (from its cookie). */
  trustedDevice?: string;
  /**
   * The whole site requires a second factor: an account without one (a new one too) answers
   * `second_factor_setup_required` and a ticket for the TOTP enrolment flows.
   */
  requireSecondFactor?: boolean;
}

/** Errors of {@linkcode findOrCreateOAuthUser}. */
export type OAuthUserError = CommonError | "invalid_email" | "email_unverified";

/**
 * Result of {@linkcode findOrCreateOAuthUser}: the user to sign in (`created` when a new
 * account was made), a failure, or — the account has a second factor (or the site requires
 * one) — the ticket of the second step, as `login` answers it. The account is linked (or made)
 * either way.
 */
export type OAuthUserResult =
  | FlowResult<{ userId: string; created: boolean }, OAuthUserError>
  | SecondFactorNeeded;

/**
 * Resolves an OAuth sign-in to a user id, linking or creating as needed. An account with a
 * confirmed TOTP answers `second_factor_required` and the ticket for `verifySecondFactor`
 * (unless `trustedDevice` is one of its remembered devices); with `requireSecondFactor` an
 * account without one answers `second_factor_setup_required` and the ticket of the enrolment.
 * The outcome reaches `onEvent` as a sign-in: `sign_in.succeeded` with `method: "oauth"`,
 * `provider` and `created`, `sign_in.second_factor_required`, or `sign_in.failed`. Never
 * throws.
 *
 * @example
 * ```ts
 * import { findOrCreateOAuthUser, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await findOrCreateOAuthUser(db, {
 *   provider: "github",
 *   providerUserId: 583231,
 *   email: "octocat@github.com",
 *   emailVerified: true,
 *   secret: "TOKEN_SECRET value",
 * });
 * if (result.ok) console.log(result.userId, result.created);
 * else if (result.error === "second_factor_required") console.log("ask for the code");
 * ```
 */
export async function findOrCreateOAuthUser(
  db: D1Database,
  p: OAuthUserParams,
): Promise<OAuthUserResult> {
  const seen: Seen = { detail: { method: "oauth" } };
  const result = await guard(async (): Promise<OAuthUserResult> => {
    const o = params(p);
    // Options of the second step are refused before anything is linked or made.
    if (o.secret !== undefined) secretOf(o.secret);
    if (o.requireSecondFactor !== undefined && typeof o.requireSecondFactor !== "boolean") {
      fail("invalid_input");
    }
    if (o.trustedDevice !== undefined && typeof o.trustedDevice !== "string") {
      fail("invalid_input");
    }
    const linked = await signInWith(db, o, seen);
    seen.userId = linked.userId;
    seen.detail = { ...seen.detail, created: linked.created };
    const second = await secondStep(db, o, { id: linked.userId }, nowOf(o.now));
    return second ?? linked;
  });
  if (!result.ok && result.error !== "invalid_input" && !seen.userId && seen.email) {
    if (reportOf(p).sink) seen.userId = await accountIdOf(db, seen.email);
  }
  return await report(
    p,
    result,
    seen,
    signInEvent,
  );
}

/** Links (or makes) the account of the identity; throws a flow error. */
async function signInWith(
  db: D1Database,
  o: Record<string, unknown>,
  seen: Seen,
): Promise<{ ok: true; userId: string; created: boolean }> {
  sinkOf(o.onEvent);
  clientOf(o.client);
  const provider = typeof o.provider === "string" && /^[a-z0-9_-]{1,64}$/.test(o.provider)
    ? o.provider
    : fail("invalid_input");
  seen.detail = { ...seen.detail, provider };
  const subject = typeof o.providerUserId === "number" && Number.isSafeInteger(o.providerUserId)
    ? String(o.providerUserId)
    : o.providerUserId;
  if (typeof subject !== "string" || subject.length < 1 || subject.length > 256) {
    fail("invalid_input");
  }
  const now = nowOf(o.now);
  const given = typeof o.email === "string" ? normalizeEmail(o.email) : null;
  if (given) seen.email = given;
  const linked = () =>
    first<{ user_id: string; email: string | null }>(
      db,
      "SELECT user_id, email FROM oauth_identities WHERE provider = ? AND provider_user_id = ?",
      provider,
      subject,
    );
  const existing = await linked();
  if (existing) {
    const proven = o.emailVerified === true && typeof o.email === "string" &&
      normalizeEmail(o.email);
    if (existing.email === null && proven) {
      // A link made without proof whose provider now proves the account's own address.
      await run(
        db,
        `UPDATE oauth_identities SET email = ? WHERE provider = ? AND provider_user_id = ?
         AND email IS NULL AND user_id IN (SELECT id FROM users WHERE email = ?)`,
        [proven, provider, subject, proven],
      );
    }
    return { ok: true as const, userId: existing.user_id, created: false };
  }
  if (typeof o.email !== "string") fail("invalid_input");
  const email = normalizeEmail(o.email) ?? fail("invalid_email");
  if (o.emailVerified !== true && o.emailVerified !== false) fail("email_unverified");
  const id = newUserId();
  const created = await run(
    db,
    `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at)
     VALUES (?, ?, NULL, 1, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [id, email, newStamp(), now, now],
  );
  if (o.emailVerified === false) {
    // Never an e-mail match: a new account, or (a concurrent first sign-in won) its link.
    if (created !== 1) {
      const raced = await linked();
      if (raced) return { ok: true as const, userId: raced.user_id, created: false };
      fail("email_unverified");
    }
    await run(
      db,
      `INSERT INTO oauth_identities (provider, provider_user_id, user_id, email, created_at)
       VALUES (?, ?, ?, NULL, ?) ON CONFLICT DO NOTHING`,
      [provider, subject, id, now],
    );
    const winner = await linked();
    if (!winner) fail("db_error");
    return { ok: true as const, userId: winner.user_id, created: winner.user_id === id };
  }
  const user = await userByEmail(db, email);
  if (!user) fail("db_error");
  if (Number(user.email_verified) !== 1) {
    await run(
      db,
      `UPDATE users SET email_verified = 1, password_hash = NULL, stamp = ?, updated_at = ?
       WHERE id = ? AND email_verified = 0`,
      [newStamp(), now, user.id],
    );
    await run(db, "DELETE FROM otp_codes WHERE email = ? AND purpose = 'signup'", [email]);
  }
  await run(
    db,
    `INSERT INTO oauth_identities (provider, provider_user_id, user_id, email, created_at)
     VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    [provider, subject, user.id, email, now],
  );
  // The provider proved the inbox: links made on this address without proof go.
  await run(db, "DELETE FROM oauth_identities WHERE user_id = ? AND email IS NULL", [user.id]);
  const winner = await linked();
  if (!winner) fail("db_error");
  return {
    ok: true as const,
    userId: winner.user_id,
    created: created === 1 && winner.user_id === user.id,
  };
}
