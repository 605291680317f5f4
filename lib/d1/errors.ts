/**
 * Results and error codes of the database flows. Every flow resolves to `{ok:true, ...}` or
 * `{ok:false, error}` and never throws; `error` is one of {@link D1ErrorCode}.
 *
 * @module
 */

/**
 * Every error code a flow can return, as a list for code that checks or translates them.
 *
 * - `invalid_input`: a parameter has the wrong type or is missing (the params object, the
 *   secret, the sender, a user id).
 * - `invalid_email`: not a plausible e-mail address (syntax, length up to 254).
 * - `password_too_short` / `password_too_long` / `password_common`: the new password fails the
 *   NIST SP 800-63B policy (see `checkPassword`).
 * - `invalid_code`: the one-time code is wrong, or there is no code for this address.
 * - `expired_code`: the code's lifetime is over.
 * - `too_many_attempts`: five wrong tries of a code were used up (request a new code), or a
 *   throttle of password sign-in, codes or re-authentication asks to wait: then `retryAfter`
 *   gives the seconds (see `THROTTLE`).
 * - `invalid_credentials`: login with an unknown e-mail or a wrong password (same answer).
 * - `email_not_verified`: login with the right password for an account not yet verified.
 * - `invalid_token`: a reset or e-mail-change token that is forged, expired, of another
 *   purpose, already used, or issued before the password or e-mail changed.
 * - `wrong_password`: the current password given to change the password, e-mail or to remove
 *   the account is wrong.
 * - `reauth_required`: removing an account needs the password or a session fresher than the limit.
 * - `not_found`: no user with this id.
 * - `invalid_name`: the display name is empty, too long or holds control characters.
 * - `email_taken`: another account already uses the new address.
 * - `same_email`: the new address is the current one.
 * - `email_unverified`: the OAuth provider did not verify the e-mail, so it cannot be linked.
 * - `last_admin`: the change would leave the site without an administrator (`setAdmin`,
 *   `adminRemoveUser`).
 * - `already_verified`: the address is verified already, there is no code to resend.
 * - `has_password`: the account has a password already (`setPassword`): change it with the
 *   current one instead.
 * - `second_factor_required`: `login` with the right password for an account with a second
 *   factor: finish with `verifySecondFactor` and the answer's `ticket`.
 * - `second_factor_setup_required`: `login` on a site that requires a second factor, for an
 *   account without one: enrol a TOTP with the answer's `ticket`.
 * - `factor_exists`: the account has a confirmed TOTP already (remove it first).
 * - `invalid_challenge`: a passkey ceremony that is unknown, used, expired or of another
 *   browser: start it again.
 * - `invalid_passkey`: the passkey's answer did not verify (signature, origin, RP ID, user
 *   verification, an unknown or another account's credential).
 * - `last_method`: removing it would leave the account without a way to sign in.
 * - `send_failed`: the injected e-mail sender threw or rejected.
 * - `db_error`: the database failed (unreachable, missing tables, driver error).
 * - `internal_error`: anything else that went wrong (a `render*` override threw, ...).
 *
 * @example
 * ```ts
 * import { D1_ERROR_CODES } from "@gatehouse/gatehouse/d1";
 * console.log(D1_ERROR_CODES.includes("invalid_code")); // true
 * ```
 */
export const D1_ERROR_CODES = [
  "invalid_input",
  "invalid_email",
  "password_too_short",
  "password_too_long",
  "password_common",
  "invalid_code",
  "expired_code",
  "too_many_attempts",
  "invalid_credentials",
  "email_not_verified",
  "invalid_token",
  "wrong_password",
  "reauth_required",
  "not_found",
  "invalid_name",
  "email_taken",
  "same_email",
  "email_unverified",
  "last_admin",
  "already_verified",
  "has_password",
  "second_factor_required",
  "second_factor_setup_required",
  "factor_exists",
  "invalid_challenge",
  "invalid_passkey",
  "last_method",
  "send_failed",
  "db_error",
  "internal_error",
] as const;

/** One of {@linkcode D1_ERROR_CODES}: the error of a failed flow. */
export type D1ErrorCode = typeof D1_ERROR_CODES[number];

/** Errors any flow can return besides its own: bad input types and failures around it. */
export type CommonError = "invalid_input" | "send_failed" | "db_error" | "internal_error";

/** Password policy failures. */
export type PasswordError = "password_too_short" | "password_too_long" | "password_common";

/** A failed flow. */
export interface FlowFailure<E extends D1ErrorCode = D1ErrorCode> {
  /** Always false. */
  ok: false;
  /** What went wrong. */
  error: E;
  /**
   * With `too_many_attempts` from a throttle: the whole seconds to wait before the next try
   * can be counted (absent when waiting does not help, e.g. a code's five tries are used).
   */
  retryAfter?: number;
}

/** A flow's result: success with its fields, or a failure with one of the codes `E`. */
export type FlowResult<T extends object, E extends D1ErrorCode> =
  | ({ ok: true } & T)
  | FlowFailure<E>;

/** Thrown inside a flow to end it with an error code; caught by `guard`. @internal */
export class FlowStop extends Error {
  constructor(readonly error: D1ErrorCode, readonly retryAfter?: number) {
    super(error);
  }
}

/** Ends the current flow with `code` (and the seconds to wait, for a throttle). @internal */
export function fail(code: D1ErrorCode, retryAfter?: number): never {
  throw new FlowStop(code, retryAfter);
}

/** Runs a flow body; anything thrown becomes `{ok:false, error}`. @internal */
export async function guard<R>(body: () => Promise<R>): Promise<R | FlowFailure<never>> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof FlowStop && e.retryAfter !== undefined) {
      return { ok: false, error: e.error, retryAfter: e.retryAfter } as FlowFailure<never>;
    }
    const error = e instanceof FlowStop ? e.error : "internal_error";
    return { ok: false, error } as FlowFailure<never>;
  }
}

/** True when a database error is a UNIQUE constraint violation (D1 and libSQL alike). @internal */
export function isUniqueViolation(e: unknown): boolean {
  const text = e instanceof Error ? `${e.message} ${(e.cause as Error)?.message ?? ""}` : "";
  return /UNIQUE constraint failed|SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)/.test(text);
}
