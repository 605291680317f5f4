/**
 * The core's typed error: thrown only for programming errors (bad options, a missing secret,
 * an unconfigured provider), never for untrusted input, which yields `false`/`null`/`{ok:false}`.
 *
 * @module
 */

/**
 * Stable codes of {@linkcode AuthError}:
 * - `invalid_options`: an option is out of range or of the wrong type (e.g. iterations, ttl).
 * - `invalid_secret`: an empty secret or an empty list of secrets was given for signing.
 * - `invalid_claims`: claims to sign are missing a required field.
 * - `not_configured`: the OAuth provider has no client in the config.
 * - `store_full`: an in-memory revocation store holds its most entries, all of them live
 *   (see `memoryRevocationStore`).
 */
export type AuthErrorCode =
  | "invalid_options"
  | "invalid_secret"
  | "invalid_claims"
  | "not_configured"
  | "store_full";

/**
 * Error thrown by the core for invalid arguments; `code` is stable, `message` never contains
 * a secret.
 *
 * @example
 * ```ts
 * import { AuthError, signToken } from "@gatehouse/gatehouse";
 * try {
 *   await signToken([], { purpose: "reset", payload: 1, ttlSeconds: 60 });
 * } catch (e) {
 *   if (e instanceof AuthError) console.log(e.code); // "invalid_secret"
 * }
 * ```
 */
export class AuthError extends Error {
  /** Stable machine-readable code. */
  readonly code: AuthErrorCode;
  /** Creates an error with a stable code and a human-readable message. */
  constructor(code: AuthErrorCode, message: string) {
    super(message);
    this.name = "AuthError";
    this.code = code;
  }
}
