/**
 * The render cases shared by the runtime tests: every component, with its props varied, built
 * with a runtime's own `createElement` and the components of one build (`react.ts` or
 * `preact.ts`). The same cases run in React 18, React 19 and Preact, and their HTML is
 * compared.
 */

// deno-lint-ignore no-explicit-any
type Component = (props: any) => unknown;

/** The components of one build. */
export interface Build {
  LoginPage: Component;
  SignupPage: Component;
  ForgotPasswordPage: Component;
  ResetPasswordPage: Component;
  VerifyEmailPage: Component;
  SsoButtons: Component;
  AuthCard: Component;
  AuthLinks: Component;
  AuthForm: Component;
  SecondFactorPage: Component;
  TotpSetupPage: Component;
  BackupCodesPage: Component;
  PasskeySignIn: Component;
  PasskeyRegister: Component;
}

/** A runtime's `createElement`. */
export type CreateElement = (
  type: unknown,
  props: object | null,
  ...children: unknown[]
) => unknown;

const styles = {
  button: { background: "rgb(15, 118, 110)", fontSize: 18 },
  card: { maxWidth: "40rem" },
  input: { borderColor: "#333" },
};

/** Name → element for every case. */
export function cases(b: Build, h: CreateElement): Record<string, unknown> {
  const sso = (p: object = {}) => h(b.SsoButtons, { providers: ["google", "github"], ...p });
  return {
    "login (defaults)": h(b.LoginPage, {}),
    "login (all props)": h(b.LoginPage, {
      action: "/site/api/auth/login",
      signupHref: "/signup",
      forgotHref: "/forgot",
      styles,
      ssoSlot: sso(),
      email: "ada@example.com",
      next: "/dashboard?a=1&b='2'",
      title: "Welcome back",
      onSuccess: () => {},
    }),
    "login (error in words)": h(b.LoginPage, { error: "invalid_credentials" }),
    "login (unknown error)": h(b.LoginPage, { error: '<img src=x onerror="alert(1)">' }),
    "login (site messages, notice)": h(b.LoginPage, {
      error: "invalid_state",
      messages: { invalid_state: 'Try again, "please" & <soon>.' },
      notice: "Your password was changed.",
    }),
    "signup (defaults)": h(b.SignupPage, {}),
    "signup (all props)": h(b.SignupPage, {
      action: "/api/auth/signup",
      loginHref: "/login",
      styles,
      ssoSlot: sso({ basePath: "/owner" }),
      error: "email_taken",
      email: "ada@example.com",
      minLength: 12,
      title: "Join",
    }),
    "forgot (defaults)": h(b.ForgotPasswordPage, {}),
    "forgot (sent)": h(b.ForgotPasswordPage, { sent: true, loginHref: "/login", email: "a@b.c" }),
    "reset": h(b.ResetPasswordPage, {
      token: 'a"b<c>&d',
      loginHref: "/login",
      forgotHref: "/forgot",
      minLength: 10,
    }),
    "reset (error)": h(b.ResetPasswordPage, { token: "t", error: "invalid_token", styles }),
    "verify (defaults)": h(b.VerifyEmailPage, {}),
    "verify (read-only e-mail)": h(b.VerifyEmailPage, {
      email: "ada@example.com",
      signupHref: "/signup",
      loginHref: "/login",
      notice: "We sent a code to ada@example.com.",
    }),
    "sso buttons": sso({
      providers: ["google", "github", "microsoft", "a b"],
      labels: { "a b": "Acme" },
      hrefTemplate: "/relay/start?provider={provider}",
      styles: { ssoButton: { color: "rgb(9, 9, 9)" } },
    }),
    "sso buttons (none)": h(b.SsoButtons, { providers: [] }),
    "card": h(b.AuthCard, { title: "Signed out", intro: "See you soon." }, h("p", null, "Bye.")),
    "links": h(b.AuthLinks, { links: [{ href: "/a", label: "A" }, { label: "no href" }] }),
    "form": h(b.AuthForm, {
      idPrefix: "invite",
      action: "/api/invite",
      fields: [{ name: "email", label: "E-mail", type: "email", autocomplete: "email" }],
      hidden: { team: "blue" },
      submitLabel: "Invite",
      pendingLabel: "Inviting…",
    }),
    "login (passkeys)": h(b.LoginPage, {
      action: "/api/auth/login",
      passkey: { optionsAction: "/pk/options", verifyAction: "/pk/verify" },
    }),
    "second factor (defaults)": h(b.SecondFactorPage, {}),
    "second factor (all props)": h(b.SecondFactorPage, {
      action: "/api/auth/second-factor",
      rememberDays: 7,
      loginHref: "/login",
      error: "invalid_code",
      styles,
    }),
    "second factor (no remember)": h(b.SecondFactorPage, { rememberDays: 0 }),
    "totp setup": h(b.TotpSetupPage, {
      qrSvg: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1"/>',
      secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
      continueHref: "/account",
      error: "invalid_code",
    }),
    "backup codes": h(b.BackupCodesPage, {
      codes: ["abcde-fghjk", "01234-56789"],
      continueHref: "/account",
      appName: "Demo & co",
    }),
    "passkey sign-in": h(b.PasskeySignIn, {
      actions: { optionsAction: "/pk/options", verifyAction: "/pk/verify" },
      label: "Passkey",
    }),
    "passkey register": h(b.PasskeyRegister, {
      actions: { optionsAction: "/pk/options", verifyAction: "/pk/verify" },
    }),
  };
}
