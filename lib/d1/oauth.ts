/**
 * Linking OAuth sign-ins to users: one row per (provider, provider user id) in
 * `oauth_identities`. A first sign-in with a provider-verified e-mail links to the account with
 * that address, or creates a verified account without a password. Linking to an account whose
 * address was never verified drops its password: the provider proved who owns the mailbox, and
 * a password set by someone else before must not keep working.
 *
 * @module
 */
import type { ClockOptions } from "./input.ts";
import { nowOf, params } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import { normalizeEmail } from "./policy.ts";
import { newStamp, newUserId, userByEmail } from "./users.ts";
import { first, run } from "./query.ts";

/** Parameters of {@linkcode findOrCreateOAuthUser}. */
export interface OAuthUserParams extends ClockOptions {
  /** Provider id, e.g. `google`, `github`, `microsoft` (lowercase letters, digits, `-`, `_`). */
  provider: string;
  /** The provider's id for the user (numbers are turned into strings). */
  providerUserId: string | number;
  /** The e-mail the provider returned. */
  email: string;
  /** Whether the provider verified that e-mail; unverified e-mails are never linked. */
  emailVerified: boolean;
}

/** Errors of {@linkcode findOrCreateOAuthUser}. */
export type OAuthUserError = CommonError | "invalid_email" | "email_unverified";

/** Result of {@linkcode findOrCreateOAuthUser}: `created` when a new account was made. */
export type OAuthUserResult = FlowResult<{ userId: string; created: boolean }, OAuthUserError>;

/**
 * Resolves an OAuth sign-in to a user id, linking or creating as needed. Never throws.
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
 * });
 * if (result.ok) console.log(result.userId, result.created);
 * ```
 */
export function findOrCreateOAuthUser(
  db: D1Database,
  p: OAuthUserParams,
): Promise<OAuthUserResult> {
  return guard(async () => {
    const o = params(p);
    const provider = typeof o.provider === "string" && /^[a-z0-9_-]{1,64}$/.test(o.provider)
      ? o.provider
      : fail("invalid_input");
    const subject = typeof o.providerUserId === "number" && Number.isSafeInteger(o.providerUserId)
      ? String(o.providerUserId)
      : o.providerUserId;
    if (typeof subject !== "string" || subject.length < 1 || subject.length > 256) {
      fail("invalid_input");
    }
    const now = nowOf(o.now);
    const linked = () =>
      first<{ user_id: string }>(
        db,
        "SELECT user_id FROM oauth_identities WHERE provider = ? AND provider_user_id = ?",
        provider,
        subject,
      );
    const existing = await linked();
    if (existing) return { ok: true as const, userId: existing.user_id, created: false };
    if (typeof o.email !== "string") fail("invalid_input");
    const email = normalizeEmail(o.email) ?? fail("invalid_email");
    if (o.emailVerified !== true) fail("email_unverified");
    const created = await run(
      db,
      `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at)
       VALUES (?, ?, NULL, 1, ?, ?, ?) ON CONFLICT DO NOTHING`,
      [newUserId(), email, newStamp(), now, now],
    );
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
    const winner = await linked();
    if (!winner) fail("db_error");
    return {
      ok: true as const,
      userId: winner.user_id,
      created: created === 1 && winner.user_id === user.id,
    };
  });
}
