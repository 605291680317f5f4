/**
 * The sign-in throttle for a password the site checks itself — a shared owner password, an
 * operator's passphrase — rather than an account's (`login`). Every try is counted first, in
 * the same `auth_throttle` table and with the same limits as password sign-in (`THROTTLE`):
 * per guarded name and client, per client over everything it guesses, and per guarded name for
 * clients not known to it; a right password clears the name's counts and makes the client
 * known, so strangers guessing never keep the owner out for good.
 *
 * @module
 */
import type { ClockOptions } from "./input.ts";
import { clientOf, nowOf, params, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import { clearTries, signInBuckets, takeTry } from "./throttle.ts";

/** Parameters of {@linkcode checkPasswordThrottled}. */
export interface CheckPasswordThrottledParams extends ClockOptions {
  /**
   * What the password guards, named for the throttle (1 to 200 characters, e.g.
   * `"owner-site"`); kept apart from the e-mail addresses `login` counts.
   */
  guards: string;
  /**
   * Who is trying: the client's IP address as the site sees it, or a device id. Without it
   * only the name-wide bucket applies, which strangers can fill for the owner; pass it.
   */
  client?: string;
  /** The check itself: true when the password is right. Runs only for a counted try. */
  check: () => boolean | Promise<boolean>;
}

/** Errors of {@linkcode checkPasswordThrottled}. */
export type CheckPasswordThrottledError =
  | CommonError
  | "invalid_credentials"
  | "too_many_attempts";

/** Result of {@linkcode checkPasswordThrottled}. */
export type CheckPasswordThrottledResult = FlowResult<
  Record<never, never>,
  CheckPasswordThrottledError
>;

/**
 * Counts a try of a site-held password, then runs `check` unless the throttle asks to wait.
 * Never throws: a wrong password is `invalid_credentials`, a refused try `too_many_attempts`
 * with `retryAfter` seconds (and `check` does not run, so it costs no hashing).
 *
 * @example
 * ```ts
 * import { checkPasswordThrottled, openLibsql } from "@gatehouse/gatehouse/d1";
 * import { verifyPassword } from "@gatehouse/gatehouse";
 * const db = openLibsql("file:.data/site.db");
 * const ownerHash = Deno.env.get("OWNER_PASSWORD_HASH") ?? "";
 * const r = await checkPasswordThrottled(db, {
 *   guards: "owner-site",
 *   client: "203.0.113.7",
 *   check: () => verifyPassword("the typed password", ownerHash),
 * });
 * if (!r.ok && r.error === "too_many_attempts") console.log("wait", r.retryAfter, "s");
 * ```
 */
export function checkPasswordThrottled(
  db: D1Database,
  p: CheckPasswordThrottledParams,
): Promise<CheckPasswordThrottledResult> {
  return guard(async () => {
    const o = params(p);
    const name = stringOf(o.guards, 200);
    if (name === "" || typeof o.check !== "function") fail("invalid_input");
    const client = clientOf(o.client);
    const now = nowOf(o.now);
    // E-mail addresses hold an "@" and never start with this: the two never share a bucket.
    const account = `password:${name}`;
    await takeTry(db, signInBuckets(account, client), now);
    if (!(await (o.check as () => boolean | Promise<boolean>)())) fail("invalid_credentials");
    await clearTries(db, "sign-in", account, client, now);
    return { ok: true as const };
  });
}
