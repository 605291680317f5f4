/**
 * Sign-in pages for Gatehouse sites, written with preact and free of framework-specific
 * imports: {@linkcode LoginPage}, {@linkcode SsoButtons}, {@linkcode SignupPage},
 * {@linkcode ForgotPasswordPage}, {@linkcode ResetPasswordPage} and
 * {@linkcode VerifyEmailPage}. They render on the server (`preact-render-to-string`, or
 * {@linkcode renderAuthDocument} for a whole document) and hydrate in the browser
 * ({@linkcode hydrateAuthPage}). Each page is a plain form that works with JavaScript off
 * (POST and a redirect) and, once hydrated, posts with `fetch`, shows errors inline in an
 * `aria-live` region and calls `onSuccess`. The look is set by style objects: see
 * {@linkcode defaultStyles}; a site overrides any element through the `styles` prop.
 *
 * @example
 * ```ts
 * import { renderAuthDocument } from "@gatehouse/gatehouse/react";
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
  type AuthFormProps,
  AuthLinks,
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
export { LoginPage, type LoginPageProps } from "./lib/react/login.ts";
export { SsoButtons, type SsoButtonsProps } from "./lib/react/sso.ts";
export { SignupPage, type SignupPageProps } from "./lib/react/signup.ts";
export {
  ForgotPasswordPage,
  type ForgotPasswordPageProps,
  RESET_SENT,
} from "./lib/react/forgot.ts";
export { ResetPasswordPage, type ResetPasswordPageProps } from "./lib/react/reset.ts";
export { VerifyEmailPage, type VerifyEmailPageProps } from "./lib/react/verify.ts";
export type { AuthElement, AuthNode } from "./lib/react/types.ts";
export {
  type AuthDocumentOptions,
  type AuthPageData,
  authPageElement,
  type AuthPages,
  hydrateAuthPage,
  type HydrateOptions,
  type HydrationDocument,
  renderAuthDocument,
} from "./lib/react/document.ts";
