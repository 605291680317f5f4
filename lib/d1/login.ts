/**
 * Password login. Unknown addresses and wrong passwords get the same answer after the same
 * work (a PBKDF2 verification against a dummy hash); the pending password of an unverified
 * account (its latest signup's) gets its own code, `email_not_verified`. A hash stored with
 * another cost than `iterations` (default the core's) is rehashed at that cost after a
 * successful login.
 *
 * @module
 */
import { hashPassword, needsRehash } from "../auth/password.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import { iterationsOf, nowOf, params, passwordOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import { normalizeEmail, normalizePassword } from "./policy.ts";
import { credentialsByEmail, verifyOrDummy } from "./users.ts";
import { run } from "./query.ts";

/** Parameters of {@linkcode login}. */
export interface LoginParams extends HashingOptions, ClockOptions {
  /** The account's e-mail address. */
  email: string;
  /** The password. */
  password: string;
}

/** Errors of {@linkcode login}. */
export type LoginError = CommonError | "invalid_credentials" | "email_not_verified";

/** Result of {@linkcode login}. */
export type LoginResult = FlowResult<{ userId: string }, LoginError>;

/**
 * Checks an e-mail and password. Never throws.
 *
 * @example
 * ```ts
 * import { login, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const result = await login(db, { email: "ada@example.com", password: "correct horse" });
 * if (result.ok) console.log("user", result.userId);
 * ```
 */
export function login(db: D1Database, p: LoginParams): Promise<LoginResult> {
  return guard(async () => {
    const o = params(p);
    const password = normalizePassword(passwordOf(o.password));
    const iterations = iterationsOf(o.iterations);
    const now = nowOf(o.now);
    const email = normalizeEmail(o.email);
    const user = email ? await credentialsByEmail(db, email) : null;
    const ok = await verifyOrDummy(password, user?.hash, iterations);
    if (!user || !ok) fail("invalid_credentials");
    if (!user.verified) fail("email_not_verified");
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
    return { ok: true as const, userId: user.id };
  });
}
