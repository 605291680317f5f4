/**
 * Error codes in words. Pages receive error codes (from a JSON `{error}` answer, from
 * `?error=` or from `?oauth_error=`) and show the sentence for the code, never the code or
 * any other text taken from the URL: an unknown code is shown as a generic sentence.
 *
 * @module
 */

/** A site's own sentences for error codes, merged over the built-in ones. */
export type ErrorMessages = Record<string, string>;

const builtIn: Record<string, string> = {
  // sign in
  invalid_credentials: "That e-mail and password don't match an account.",
  invalid_login: "That e-mail and password don't match an account.",
  user_not_found: "That e-mail and password don't match an account.",
  not_verified: "Please verify your e-mail address first: enter the code we sent you.",
  email_not_verified: "Please verify your e-mail address first: enter the code we sent you.",
  forbidden: "This account is not allowed to sign in to this site.",
  rate_limited: "Too many attempts. Please wait a minute and try again.",
  too_many_attempts: "Too many attempts. Please wait a minute and try again.",
  // input
  missing_fields: "Please fill in every field.",
  invalid_email: "Please enter a valid e-mail address.",
  weak_password: "Please choose a longer password (at least 8 characters).",
  password_too_short: "Please choose a longer password (at least 8 characters).",
  password_too_long: "Please choose a shorter password (at most 256 characters).",
  password_common: "That password is too common. Please choose another one.",
  invalid_input: "Please fill in every field.",
  invalid_name: "Please enter a shorter name without special characters.",
  same_email: "That is already your e-mail address.",
  wrong_password: "Your current password is not right.",
  reauth_required: "Please sign in again to do this.",
  not_found: "That account no longer exists.",
  last_admin: "This is the last administrator: make someone else an administrator first.",
  already_verified: "This e-mail address is verified already.",
  has_password: "This account has a password already: change it with the current one.",
  email_taken: "An account with that e-mail already exists. Try signing in.",
  email_exists: "An account with that e-mail already exists. Try signing in.",
  already_exists: "An account with that e-mail already exists. Try signing in.",
  // second factors and passkeys
  second_factor_required: "Enter the code from your authenticator app, or a backup code.",
  second_factor_setup_required: "This site asks for a second factor: set up an authenticator app.",
  factor_exists: "An authenticator app is set up already: remove it first.",
  invalid_challenge: "That passkey request expired or was used. Please try again.",
  invalid_passkey: "That passkey could not be checked. Try again or use your password.",
  last_method: "This is your only way to sign in: add another before removing it.",
  // codes and links
  invalid_code: "That code is not right. Check the e-mail and try again.",
  code_expired: "That code has expired. Sign up again to get a new one.",
  expired_code: "That code has expired. Sign up again to get a new one.",
  invalid_token: "This link is not valid. Please ask for a new one.",
  token_expired: "This link has expired. Please ask for a new one.",
  expired_token: "This link has expired. Please ask for a new one.",
  expired: "This link or code has expired. Please ask for a new one.",
  // single sign-on
  access_denied: "Sign-in was cancelled at the provider.",
  invalid_state: "The sign-in took too long or came from another tab. Please try again.",
  state_mismatch: "The sign-in took too long or came from another tab. Please try again.",
  missing_code: "The provider did not complete the sign-in. Please try again.",
  token_exchange_failed: "The provider did not complete the sign-in. Please try again.",
  exchange_failed: "The provider did not complete the sign-in. Please try again.",
  profile_failed: "The provider did not complete the sign-in. Please try again.",
  invalid_request: "The provider did not complete the sign-in. Please try again.",
  not_configured: "That sign-in provider is not available here.",
  provider_error: "The provider did not complete the sign-in. Please try again.",
  userinfo_failed: "The provider did not complete the sign-in. Please try again.",
  no_verified_email: "Your account at the provider has no verified e-mail address.",
  email_unverified:
    "The provider did not verify this e-mail address. Sign in another way, or verify it at the provider.",
  unknown_provider: "That sign-in provider is not available here.",
  provider_not_configured: "That sign-in provider is not available here.",
  relay_invalid: "The sign-in could not be confirmed. Please try again.",
  // server side
  send_failed: "We could not send the e-mail. Please try again in a moment.",
  db_error: "The service is having trouble. Please try again in a moment.",
  internal_error: "The service is having trouble. Please try again in a moment.",
  // transport
  network: "We could not reach the server. Check your connection and try again.",
};

/** The sentence shown for codes nobody described. */
export const GENERIC_ERROR = "Something went wrong. Please try again.";

/**
 * The sentence for an error code: the site's own words first, then the built-in ones, then
 * a generic sentence. The code itself is never part of the result.
 *
 * @example
 * ```ts
 * import { describeError } from "@gatehouse/gatehouse/react";
 * describeError("invalid_state"); // "The sign-in took too long or came from another tab. ..."
 * describeError("<script>"); // "Something went wrong. Please try again."
 * ```
 */
export function describeError(code: string, messages?: ErrorMessages): string {
  if (typeof code !== "string") return GENERIC_ERROR;
  if (messages && Object.hasOwn(messages, code)) return messages[code];
  return Object.hasOwn(builtIn, code) ? builtIn[code] : GENERIC_ERROR;
}

/**
 * True when `code` has a sentence of its own (the site's or a built-in one). Pages use it to
 * keep unknown codes, e.g. from a hand-edited `?oauth_error=`, out of everything they render.
 *
 * @example
 * ```ts
 * import { isDescribedError } from "@gatehouse/gatehouse/react";
 * isDescribedError("invalid_state"); // true
 * isDescribedError("<img src=x>"); // false
 * ```
 */
export function isDescribedError(code: string, messages?: ErrorMessages): boolean {
  if (typeof code !== "string") return false;
  return (messages !== undefined && Object.hasOwn(messages, code)) || Object.hasOwn(builtIn, code);
}
