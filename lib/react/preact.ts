/**
 * The sign-in components bound to Preact: the shared components of `pages.ts` over Preact's
 * `h` and `useState`, typed with `AuthNode`/`AuthElement` (Preact's nodes and elements). The document helpers
 * use `preact-render-to-string` and Preact's `hydrate`.
 *
 * @module
 */
import { Fragment, h, hydrate, type VNode } from "preact";
import { useState } from "preact/hooks";
import { renderToString } from "preact-render-to-string";
import {
  authDocumentHtml,
  type AuthDocumentOptions,
  type AuthPageData,
  authPageNode,
  findAuthPage,
  type HydrateOptions,
  safeAuthPageData,
} from "./document.ts";
import type { AuthCardProps, AuthFormProps, AuthLinksProps, OnSuccess } from "./form.ts";
import type { ForgotPasswordPageProps } from "./forgot.ts";
import type { LoginPageProps } from "./login.ts";
import { createAuthComponents } from "./pages.ts";
import {
  assertRendererSharesPreact,
  assertSupportedPreact,
  assertThisPreact,
  watchForeignElements,
} from "./preact_check.ts";
import type { ResetPasswordPageProps } from "./reset.ts";
import type { AuthElement, AuthNode, AuthRuntime } from "./runtime.ts";
import type { SignupPageProps } from "./signup.ts";
import type { SsoButtonsProps } from "./sso.ts";
import type { VerifyEmailPageProps } from "./verify.ts";
import type { SecondFactorPageProps } from "./second_factor.ts";
import type { TotpSetupPageProps } from "./totp_setup.ts";
import type { BackupCodesPageProps } from "./totp_setup.ts";
import type { PasskeySignInProps } from "./passkey_button.ts";
import type { PasskeyRegisterProps } from "./passkey_button.ts";

assertSupportedPreact();
assertRendererSharesPreact(renderToString);
watchForeignElements();

const runtime: AuthRuntime<AuthElement> = {
  createElement: h as AuthRuntime<AuthElement>["createElement"],
  Fragment,
  useState: useState as AuthRuntime<AuthElement>["useState"],
};
const c = createAuthComponents(runtime);

/**
 * A sign-in page. Posts `email`, `password` (and `next` when given) to `action`. With
 * JavaScript off the browser follows the site's redirect; with it on, the page posts with
 * `fetch`, shows `{error}` answers in words and calls `onSuccess` with a success answer.
 *
 * @example Server-render the page
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { LoginPage, SsoButtons } from "@gatehouse/gatehouse/preact";
 * const html = renderToString(h(LoginPage, {
 *   action: "/api/auth/login",
 *   signupHref: "/signup",
 *   forgotHref: "/forgot",
 *   ssoSlot: h(SsoButtons, { providers: ["google", "github"] }),
 * }));
 * ```
 */
export function LoginPage(this: unknown, props: LoginPageProps<AuthNode>): AuthElement {
  assertThisPreact(this, "LoginPage");
  return c.LoginPage(props);
}

/**
 * A sign-up page. Posts `email` and `password` (autocomplete `new-password`) to `action`;
 * the site answers with where to enter the code (a redirect, or JSON `{redirect}`).
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { SignupPage } from "@gatehouse/gatehouse/preact";
 * renderToString(h(SignupPage, { action: "/api/auth/signup", loginHref: "/login" }));
 * ```
 */
export function SignupPage(this: unknown, props: SignupPageProps<AuthNode>): AuthElement {
  assertThisPreact(this, "SignupPage");
  return c.SignupPage(props);
}

/**
 * A forgot-password page. Posts `email` to `action`; afterwards it always says the same
 * sentence, so it never tells whether an account exists.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { ForgotPasswordPage } from "@gatehouse/gatehouse/preact";
 * renderToString(h(ForgotPasswordPage, { action: "/api/auth/forgot", loginHref: "/login" }));
 * ```
 */
export function ForgotPasswordPage(this: unknown, props: ForgotPasswordPageProps): AuthElement {
  assertThisPreact(this, "ForgotPasswordPage");
  return c.ForgotPasswordPage(props);
}

/**
 * A reset-password page. Posts `token` and `password` (autocomplete `new-password`).
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { ResetPasswordPage } from "@gatehouse/gatehouse/preact";
 * const token = new URL("https://example.com/reset?token=abc").searchParams.get("token") ?? "";
 * renderToString(h(ResetPasswordPage, { token, loginHref: "/login" }));
 * ```
 */
export function ResetPasswordPage(this: unknown, props: ResetPasswordPageProps): AuthElement {
  assertThisPreact(this, "ResetPasswordPage");
  return c.ResetPasswordPage(props);
}

/**
 * A verify-e-mail page. Posts `email` and `code` (autocomplete `one-time-code`, numeric
 * keyboard) to `action`.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { VerifyEmailPage } from "@gatehouse/gatehouse/preact";
 * renderToString(h(VerifyEmailPage, { email: "ada@example.com", action: "/api/auth/verify" }));
 * ```
 */
export function VerifyEmailPage(this: unknown, props: VerifyEmailPageProps): AuthElement {
  assertThisPreact(this, "VerifyEmailPage");
  return c.VerifyEmailPage(props);
}

/**
 * Links to `/api/auth/oauth/{provider}/start` for each provider, labelled "Continue with …".
 * Plain links: they work the same with JavaScript off. Nothing for an empty list.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { SsoButtons } from "@gatehouse/gatehouse/preact";
 * renderToString(h(SsoButtons, { providers: ["github"] }));
 * // <ul ...><li><a href="/api/auth/oauth/github/start" ...>Continue with GitHub</a></li></ul>
 * ```
 */
export function SsoButtons(this: unknown, props: SsoButtonsProps): AuthElement | null {
  assertThisPreact(this, "SsoButtons");
  return c.SsoButtons(props);
}

/**
 * The second step of a sign-in: posts `code` (an authenticator code or a backup code) and, when ticked, `remember` (`1`) to `action`.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { SecondFactorPage } from "@gatehouse/gatehouse/preact";
 * renderToString(h(SecondFactorPage, { action: "/api/auth/second-factor", loginHref: "/login" }));
 * ```
 */
export function SecondFactorPage(props: SecondFactorPageProps): AuthElement {
  return c.SecondFactorPage(props);
}

/**
 * Setting up an authenticator app: the QR code and key, then a first code (posted as `code` to `action`); the site's answer's `backupCodes` are then shown in place.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { TotpSetupPage } from "@gatehouse/gatehouse/preact";
 * renderToString(h(TotpSetupPage, { qrSvg: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>", secret: "JBSWY3DPEHPK3PXP" }));
 * ```
 */
export function TotpSetupPage(props: TotpSetupPageProps): AuthElement {
  return c.TotpSetupPage(props);
}

/**
 * The backup codes, shown once, with a download link (and a print button once JavaScript runs).
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { BackupCodesPage } from "@gatehouse/gatehouse/preact";
 * renderToString(h(BackupCodesPage, { codes: ["abcde-fghjk"], continueHref: "/account" }));
 * ```
 */
export function BackupCodesPage(props: BackupCodesPageProps): AuthElement {
  return c.BackupCodesPage(props);
}

/**
 * A "Use a passkey" button (and the autofill list of the username field), hidden until the page is hydrated in a browser with WebAuthn.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { PasskeySignIn } from "@gatehouse/gatehouse/preact";
 * renderToString(h(PasskeySignIn, { actions: { optionsAction: "/api/auth/passkey/options", verifyAction: "/api/auth/passkey/verify" } }));
 * ```
 */
export function PasskeySignIn(props: PasskeySignInProps): AuthElement {
  return c.PasskeySignIn(props);
}

/**
 * An "Add a passkey" form for the signed-in account, hidden until the page is hydrated in a browser with WebAuthn.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { renderToString } from "preact-render-to-string";
 * import { PasskeyRegister } from "@gatehouse/gatehouse/preact";
 * renderToString(h(PasskeyRegister, { actions: { optionsAction: "/account/passkeys/options", verifyAction: "/account/passkeys/verify" } }));
 * ```
 */
export function PasskeyRegister(props: PasskeyRegisterProps): AuthElement {
  return c.PasskeyRegister(props);
}

/**
 * The card that holds a page: `<main>`, a heading, an optional sentence, the content. For a
 * site's own pages that sit beside the sign-in pages.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { AuthCard } from "@gatehouse/gatehouse/preact";
 * h(AuthCard, { title: "Signed out" }, h("p", null, "See you soon."));
 * ```
 */
export function AuthCard(this: unknown, props: AuthCardProps<AuthNode>): AuthElement {
  assertThisPreact(this, "AuthCard");
  return c.AuthCard(props);
}

/**
 * A row of secondary links; links without an `href` are left out, and nothing is rendered
 * when none is left.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { AuthLinks } from "@gatehouse/gatehouse/preact";
 * h(AuthLinks, { links: [{ href: "/login", label: "Back to sign in" }] });
 * ```
 */
export function AuthLinks(this: unknown, props: AuthLinksProps): AuthElement | null {
  assertThisPreact(this, "AuthLinks");
  return c.AuthLinks(props);
}

/**
 * The form every page is made of: a plain `<form method="post">` that, once hydrated, posts
 * with `fetch`, shows errors in words in an `aria-live` region and calls `onSuccess`.
 *
 * @example A page of a site's own
 * ```ts
 * import { h } from "preact";
 * import { AuthForm } from "@gatehouse/gatehouse/preact";
 * h(AuthForm, {
 *   idPrefix: "invite",
 *   action: "/api/invite",
 *   fields: [{ name: "email", label: "E-mail", type: "email", autocomplete: "email" }],
 *   submitLabel: "Invite",
 *   pendingLabel: "Inviting…",
 * });
 * ```
 */
export function AuthForm(this: unknown, props: AuthFormProps): AuthElement {
  assertThisPreact(this, "AuthForm");
  // AuthForm holds state: rendered as its own element so its hooks belong to it.
  return runtime.createElement(c.AuthForm, props);
}

/**
 * The element for a page named in JSON data: the component with its props, `onSuccess`, and
 * its SSO buttons in `ssoSlot`.
 *
 * @example
 * ```ts
 * import { renderToString } from "preact-render-to-string";
 * import { authPageElement } from "@gatehouse/gatehouse/preact";
 * renderToString(authPageElement({ page: "forgot", props: { loginHref: "/login" } }));
 * ```
 */
export function authPageElement(data: AuthPageData, onSuccess?: OnSuccess): AuthElement {
  return authPageNode(runtime, c, data, onSuccess);
}

/**
 * A complete HTML document for a page, server-rendered with `preact-render-to-string`, with
 * its props embedded as JSON so the script at `scriptSrc` can hydrate it. Without `scriptSrc`
 * it is plain HTML that works with JavaScript off.
 *
 * @example
 * ```ts
 * import { renderAuthDocument } from "@gatehouse/gatehouse/preact";
 * const html = renderAuthDocument(
 *   { page: "login", props: { signupHref: "/signup" }, sso: { providers: ["google"] } },
 *   { scriptSrc: "/auth-client.js" },
 * );
 * new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
 * ```
 */
export function renderAuthDocument(data: AuthPageData, options: AuthDocumentOptions = {}): string {
  const safe = safeAuthPageData(data);
  return authDocumentHtml(renderToString(authPageElement(safe) as VNode), safe, options);
}

/**
 * In the browser: hydrates the page that {@linkcode renderAuthDocument} rendered, so forms
 * post with `fetch`, errors appear inline and `onSuccess` runs. Returns false when the
 * document holds no page.
 *
 * @example The client script served at `scriptSrc`
 * ```ts ignore
 * import { hydrateAuthPage } from "@gatehouse/gatehouse/preact";
 * hydrateAuthPage({ onSuccess: (r) => location.assign(r.redirect ?? "/") });
 * ```
 */
export function hydrateAuthPage(options: HydrateOptions = {}): boolean {
  const found = findAuthPage(options);
  if (!found) return false;
  hydrate(
    authPageElement(found.data, found.onSuccess) as VNode,
    found.root as Element,
  );
  return true;
}
