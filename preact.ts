/**
 * Sign-in pages for Gatehouse sites as Preact components: {@linkcode LoginPage},
 * {@linkcode SsoButtons}, {@linkcode SignupPage}, {@linkcode ForgotPasswordPage},
 * {@linkcode ResetPasswordPage} and {@linkcode VerifyEmailPage}. The same components, from
 * the same source, are built for React 18 and 19 in `@gatehouse/gatehouse/react`; both render
 * the same HTML for the same props.
 *
 * They render on the server (`preact-render-to-string`, or {@linkcode renderAuthDocument}
 * for a whole document) and hydrate in the browser ({@linkcode hydrateAuthPage}). Each page
 * is a plain form that works with JavaScript off (POST and a redirect) and, once hydrated,
 * posts with `fetch`, shows errors inline in an `aria-live` region and calls `onSuccess`.
 * The look is set by style objects: see {@linkcode defaultStyles}; a site overrides any
 * element through the `styles` prop.
 *
 * @example
 * ```ts
 * import { renderAuthDocument } from "@gatehouse/gatehouse/preact";
 * const html = renderAuthDocument({
 *   page: "login",
 *   props: { action: "/api/auth/login", forgotHref: "/forgot", styles: { button: { background: "#111" } } },
 *   sso: { providers: ["google", "github"] },
 * });
 * ```
 *
 * @module
 */
export {
  AuthCard,
  AuthForm,
  AuthLinks,
  authPageElement,
  BackupCodesPage,
  ForgotPasswordPage,
  hydrateAuthPage,
  LoginPage,
  PasskeyRegister,
  PasskeySignIn,
  renderAuthDocument,
  ResetPasswordPage,
  SecondFactorPage,
  SignupPage,
  SsoButtons,
  TotpSetupPage,
  VerifyEmailPage,
} from "./lib/react/preact.ts";
export {
  type AuthCardProps,
  type AuthFormProps,
  type AuthLinksProps,
  type AuthResult,
  type FieldSpec,
  type OnSuccess,
} from "./lib/react/form.ts";
export {
  type AuthStyles,
  defaultStyles,
  styleFor,
  type StyleKey,
  type StyleObject,
} from "./lib/react/styles.ts";
export {
  describeError,
  type ErrorMessages,
  GENERIC_ERROR,
  isDescribedError,
} from "./lib/react/messages.ts";
export type { LoginPageProps } from "./lib/react/login.ts";
export type { SsoButtonsProps } from "./lib/react/sso.ts";
export type { SignupPageProps } from "./lib/react/signup.ts";
export { type ForgotPasswordPageProps, RESET_SENT } from "./lib/react/forgot.ts";
export type { ResetPasswordPageProps } from "./lib/react/reset.ts";
export type { VerifyEmailPageProps } from "./lib/react/verify.ts";
export type { SecondFactorPageProps } from "./lib/react/second_factor.ts";
export type { BackupCodesPageProps, TotpSetupPageProps } from "./lib/react/totp_setup.ts";
export type { PasskeyRegisterProps, PasskeySignInProps } from "./lib/react/passkey_button.ts";
export {
  autofillAvailable,
  type PasskeyActions,
  type PasskeyOutcome,
  passkeyRegister,
  passkeysAvailable,
  passkeySignIn,
} from "./lib/react/passkey.ts";
export type { AuthElement, AuthNode } from "./lib/react/runtime.ts";
export type {
  AuthDocumentOptions,
  AuthPageData,
  AuthPages,
  HydrateOptions,
  HydrationDocument,
} from "./lib/react/document.ts";
