/**
 * All sign-in components bound to one runtime: the single place where the React and Preact
 * builds get their components, so both are made from the same code.
 *
 * @module
 */
import { createFormPieces, type FormPieces } from "./form.ts";
import { createForgotPasswordPage, type ForgotPasswordPageProps } from "./forgot.ts";
import { createLoginPage, type LoginPageProps } from "./login.ts";
import { createResetPasswordPage, type ResetPasswordPageProps } from "./reset.ts";
import type { AuthRuntime } from "./runtime.ts";
import { createSignupPage, type SignupPageProps } from "./signup.ts";
import { createSsoButtons, type SsoButtonsProps } from "./sso.ts";
import { createVerifyEmailPage, type VerifyEmailPageProps } from "./verify.ts";
import {
  createPasskeyButtons,
  type PasskeyRegisterProps,
  type PasskeySignInProps,
} from "./passkey_button.ts";
import { createSecondFactorPage, type SecondFactorPageProps } from "./second_factor.ts";
import {
  type BackupCodesPageProps,
  createTotpPages,
  type TotpSetupPageProps,
} from "./totp_setup.ts";

/** Every component of the sign-in pages, for one runtime with element type `E`. */
export interface AuthComponents<E> extends FormPieces<E> {
  /** The sign-in page. */
  LoginPage(props: LoginPageProps<unknown>): E;
  /** The sign-up page. */
  SignupPage(props: SignupPageProps<unknown>): E;
  /** The forgot-password page. */
  ForgotPasswordPage(props: ForgotPasswordPageProps): E;
  /** The reset-password page. */
  ResetPasswordPage(props: ResetPasswordPageProps): E;
  /** The verify-e-mail page. */
  VerifyEmailPage(props: VerifyEmailPageProps): E;
  /** Single sign-on links. */
  SsoButtons(props: SsoButtonsProps): E | null;
  /** The second step of a sign-in (authenticator code or backup code). */
  SecondFactorPage(props: SecondFactorPageProps): E;
  /** Setting up an authenticator app (QR code, first code, backup codes). */
  TotpSetupPage(props: TotpSetupPageProps): E;
  /** The backup codes, shown once. */
  BackupCodesPage(props: BackupCodesPageProps): E;
  /** Sign in with a passkey (button and autofill). */
  PasskeySignIn(props: PasskeySignInProps): E;
  /** Add a passkey to the signed-in account. */
  PasskeyRegister(props: PasskeyRegisterProps): E;
}

/** Builds every component over `rt` (React's or Preact's `createElement` and `useState`). */
export function createAuthComponents<E>(rt: AuthRuntime<E>): AuthComponents<E> {
  const pieces = createFormPieces(rt);
  const passkeys = createPasskeyButtons(rt);
  const totp = createTotpPages(rt, pieces);
  return {
    ...passkeys,
    TotpSetupPage: totp.TotpSetupPage,
    BackupCodesPage: totp.BackupCodesPage,
    SecondFactorPage: createSecondFactorPage(rt, pieces),
    ...pieces,
    LoginPage: createLoginPage(rt, pieces, passkeys),
    SignupPage: createSignupPage(rt, pieces),
    ForgotPasswordPage: createForgotPasswordPage(rt, pieces),
    ResetPasswordPage: createResetPasswordPage(rt, pieces),
    VerifyEmailPage: createVerifyEmailPage(rt, pieces),
    SsoButtons: createSsoButtons(rt),
  };
}
