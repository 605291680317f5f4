/**
 * The step-up: before a sensitive change (password, e-mail, factors, deleting the account) a
 * site asks for a factor again when the session is older than it allows; {@linkcode stepUp}
 * checks one — the password, a TOTP or backup code, or a passkey — and marks the recorded
 * session as verified now, so the changes' re-authentication (`session` of their params)
 * accepts it for their `maxSessionAgeSeconds` (default 300 s). Every check is throttled as
 * the same factor is at sign-in.
 *
 * @module
 */
import type { Secrets } from "../auth/token.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import { clientOf, iterationsOf, nowOf, params, passwordOf, secretOf, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import { checkCurrentPassword, userById } from "./users.ts";
import { first, run } from "./query.ts";
import { normalizePassword } from "./policy.ts";
import { clearTries, takeTry } from "./throttle.ts";
import { checkFactorCode, factorBuckets } from "./second_factor.ts";
import { type RelyingParty, verifyPasskeySignIn } from "./passkeys.ts";

/** Parameters of {@linkcode stepUp}: exactly one of `password`, `code`, `passkey`. */
export interface StepUpParams extends EventOptions, HashingOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The recorded session to mark (`readUserSession`'s `session`). */
  session: { id: string };
  /** The current password. */
  password?: string;
  /** A TOTP code or a backup code (needs `secret`). */
  code?: string;
  /** A passkey's answer to a `passkeySignInOptions` ceremony. */
  passkey?: { ceremony: string; response: unknown; rp: RelyingParty };
  /** The site's `TOKEN_SECRET` (for `code`). */
  secret?: Secrets;
  /** The client's IP address or a device id, for the throttle. */
  client?: string;
}

/** Errors of {@linkcode stepUp}. */
export type StepUpError =
  | CommonError
  | "not_found"
  | "wrong_password"
  | "invalid_code"
  | "invalid_challenge"
  | "invalid_passkey"
  | "too_many_attempts";

/** Result of {@linkcode stepUp}: the time it was verified, ms since the epoch. */
export type StepUpResult = FlowResult<{ verifiedAt: number; method: string }, StepUpError>;

/**
 * Checks a factor again in a signed-in, recorded session and marks the session verified now.
 * `not_found` when the session is not a recorded session of the user. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, removeTotp, stepUp } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const session = { id: "this session's id", issuedAt: 1_700_000_000 };
 * const s = await stepUp(db, { userId: "5d0c...", session, password: "the current one" });
 * if (s.ok) await removeTotp(db, { userId: "5d0c...", session, secret: "TOKEN_SECRET value" });
 * ```
 */
export async function stepUp(db: D1Database, p: StepUpParams): Promise<StepUpResult> {
  const seen: Seen = {};
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const userId = stringOf(o.userId, 200);
    seen.userId = userId;
    const session = o.session as { id?: unknown } | undefined;
    if (typeof session !== "object" || session === null || typeof session.id !== "string") {
      fail("invalid_input");
    }
    const sessionId = stringOf(session.id, 256);
    const given = [o.password, o.code, o.passkey].filter((v) => v !== undefined).length;
    if (given !== 1) fail("invalid_input");
    const iterations = iterationsOf(o.iterations);
    const client = clientOf(o.client);
    const now = nowOf(o.now);
    const user = await userById(db, userId);
    if (!user) fail("not_found");
    const recorded = await first(
      db,
      "SELECT 1 AS x FROM user_sessions WHERE id = ? AND user_id = ?",
      sessionId,
      user.id,
    );
    if (!recorded) fail("not_found");
    let method: string;
    if (o.password !== undefined) {
      const password = normalizePassword(passwordOf(o.password));
      if (!(await checkCurrentPassword(db, user, password, iterations, now))) {
        fail("wrong_password");
      }
      method = "password";
    } else if (o.code !== undefined) {
      const secrets = secretOf(o.secret);
      const code = stringOf(o.code, 64);
      const account = `factor:${user.email}`;
      await takeTry(db, factorBuckets(account, client), now);
      const matched = await checkFactorCode(db, secrets, user.id, code, now);
      if (!matched) fail("invalid_code");
      await clearTries(db, "factor", account, client, now);
      method = matched;
    } else {
      const pk = o.passkey as StepUpParams["passkey"];
      if (typeof pk !== "object" || pk === null) fail("invalid_input");
      const r = await verifyPasskeySignIn(db, { ...pk, now });
      if (!r.ok) fail(r.error === "email_not_verified" ? "invalid_passkey" : r.error);
      if (r.userId !== user.id) fail("invalid_passkey");
      method = "passkey";
    }
    const marked = await run(
      db,
      "UPDATE user_sessions SET verified_at = ? WHERE id = ? AND user_id = ?",
      [now, sessionId, user.id],
    );
    if (marked !== 1) fail("not_found");
    seen.detail = { method };
    return { ok: true as const, verifiedAt: now, method };
  });
  return await report(p, result, seen, (r) => (r.ok ? "step_up.succeeded" : null));
}
