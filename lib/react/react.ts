/**
 * The sign-in components bound to React 18 or 19: the shared components of `pages.ts` over
 * `React.createElement` and `React.useState`, typed with React's `ReactNode`/`ReactElement`.
 * Only `react` is imported: the document helpers take `renderToString` (react-dom/server) and
 * `hydrateRoot` (react-dom/client) from the caller, so a client bundle never pulls in the
 * server renderer.
 *
 * @module
 */
// @ts-types="@types/react"
import { createElement, Fragment, type ReactElement, type ReactNode, useState } from "react";
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
import { assertThisReact, otherReactError } from "./react_check.ts";
import type { ResetPasswordPageProps } from "./reset.ts";
import type { AuthRuntime } from "./runtime.ts";
import type { SecondFactorPageProps } from "./second_factor.ts";
import type { TotpSetupPageProps } from "./totp_setup.ts";
import type { BackupCodesPageProps } from "./totp_setup.ts";
import type { PasskeySignInProps } from "./passkey_button.ts";
import type { PasskeyRegisterProps } from "./passkey_button.ts";
import type { SignupPageProps } from "./signup.ts";
import type { SsoButtonsProps } from "./sso.ts";
import type { VerifyEmailPageProps } from "./verify.ts";

const runtime: AuthRuntime<ReactElement> = {
  createElement: createElement as AuthRuntime<ReactElement>["createElement"],
  Fragment,
  useState: useState as AuthRuntime<ReactElement>["useState"],
};
const c = createAuthComponents(runtime);

/**
 * A sign-in page. Posts `email`, `password` (and `next` when given) to `action`. With
 * JavaScript off the browser follows the site's redirect; with it on, the page posts with
 * `fetch`, shows `{error}` answers in words and calls `onSuccess` with a success answer.
 *
 * @example Server-render the page
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { LoginPage, SsoButtons } from "@gatehouse/gatehouse/react";
 * const html = renderToString(h(LoginPage, {
 *   action: "/api/auth/login",
 *   signupHref: "/signup",
 *   forgotHref: "/forgot",
 *   ssoSlot: h(SsoButtons, { providers: ["google", "github"] }),
 * }));
 * ```
 */
export function LoginPage(props: LoginPageProps<ReactNode>): ReactElement {
  assertThisReact("LoginPage");
  return c.LoginPage(props);
}

/**
 * A sign-up page. Posts `email` and `password` (autocomplete `new-password`) to `action`;
 * the site answers with where to enter the code (a redirect, or JSON `{redirect}`).
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { SignupPage } from "@gatehouse/gatehouse/react";
 * renderToString(h(SignupPage, { action: "/api/auth/signup", loginHref: "/login" }));
 * ```
 */
export function SignupPage(props: SignupPageProps<ReactNode>): ReactElement {
  assertThisReact("SignupPage");
  return c.SignupPage(props);
}

/**
 * A forgot-password page. Posts `email` to `action`; afterwards it always says the same
 * sentence, so it never tells whether an account exists.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { ForgotPasswordPage } from "@gatehouse/gatehouse/react";
 * renderToString(h(ForgotPasswordPage, { action: "/api/auth/forgot", loginHref: "/login" }));
 * ```
 */
export function ForgotPasswordPage(props: ForgotPasswordPageProps): ReactElement {
  assertThisReact("ForgotPasswordPage");
  return c.ForgotPasswordPage(props);
}

/**
 * A reset-password page. Posts `token` and `password` (autocomplete `new-password`).
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { ResetPasswordPage } from "@gatehouse/gatehouse/react";
 * const token = new URL("https://example.com/reset?token=abc").searchParams.get("token") ?? "";
 * renderToString(h(ResetPasswordPage, { token, loginHref: "/login" }));
 * ```
 */
export function ResetPasswordPage(props: ResetPasswordPageProps): ReactElement {
  assertThisReact("ResetPasswordPage");
  return c.ResetPasswordPage(props);
}

/**
 * A verify-e-mail page. Posts `email` and `code` (autocomplete `one-time-code`, numeric
 * keyboard) to `action`.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { VerifyEmailPage } from "@gatehouse/gatehouse/react";
 * renderToString(h(VerifyEmailPage, { email: "ada@example.com", action: "/api/auth/verify" }));
 * ```
 */
export function VerifyEmailPage(props: VerifyEmailPageProps): ReactElement {
  assertThisReact("VerifyEmailPage");
  return c.VerifyEmailPage(props);
}

/**
 * Links to `/api/auth/oauth/{provider}/start` for each provider, labelled "Continue with …".
 * Plain links: they work the same with JavaScript off. Nothing for an empty list.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { SsoButtons } from "@gatehouse/gatehouse/react";
 * renderToString(h(SsoButtons, { providers: ["github"] }));
 * // <ul ...><li><a href="/api/auth/oauth/github/start" ...>Continue with GitHub</a></li></ul>
 * ```
 */
export function SsoButtons(props: SsoButtonsProps): ReactElement | null {
  assertThisReact("SsoButtons");
  return c.SsoButtons(props);
}

/**
 * The second step of a sign-in: posts `code` (an authenticator code or a backup code) and, when ticked, `remember` (`1`) to `action`.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { SecondFactorPage } from "@gatehouse/gatehouse/react";
 * renderToString(h(SecondFactorPage, { action: "/api/auth/second-factor", loginHref: "/login" }));
 * ```
 */
export function SecondFactorPage(props: SecondFactorPageProps): ReactElement {
  assertThisReact("SecondFactorPage");
  return c.SecondFactorPage(props);
}

/**
 * Setting up an authenticator app: the QR code and key, then a first code (posted as `code` to `action`); the site's answer's `backupCodes` are then shown in place.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { TotpSetupPage } from "@gatehouse/gatehouse/react";
 * renderToString(h(TotpSetupPage, { qrSvg: "<svg xmlns=\"http://www.w3.org/2000/svg\"/>", secret: "JBSWY3DPEHPK3PXP" }));
 * ```
 */
export function TotpSetupPage(props: TotpSetupPageProps): ReactElement {
  assertThisReact("TotpSetupPage");
  return c.TotpSetupPage(props);
}

/**
 * The backup codes, shown once, with a download link (and a print button once JavaScript runs).
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { BackupCodesPage } from "@gatehouse/gatehouse/react";
 * renderToString(h(BackupCodesPage, { codes: ["abcde-fghjk"], continueHref: "/account" }));
 * ```
 */
export function BackupCodesPage(props: BackupCodesPageProps): ReactElement {
  assertThisReact("BackupCodesPage");
  return c.BackupCodesPage(props);
}

/**
 * A "Use a passkey" button (and the autofill list of the username field), hidden until the page is hydrated in a browser with WebAuthn.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { PasskeySignIn } from "@gatehouse/gatehouse/react";
 * renderToString(h(PasskeySignIn, { actions: { optionsAction: "/api/auth/passkey/options", verifyAction: "/api/auth/passkey/verify" } }));
 * ```
 */
export function PasskeySignIn(props: PasskeySignInProps): ReactElement {
  assertThisReact("PasskeySignIn");
  return c.PasskeySignIn(props);
}

/**
 * An "Add a passkey" form for the signed-in account, hidden until the page is hydrated in a browser with WebAuthn.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { renderToString } from "react-dom/server";
 * import { PasskeyRegister } from "@gatehouse/gatehouse/react";
 * renderToString(h(PasskeyRegister, { actions: { optionsAction: "/account/passkeys/options", verifyAction: "/account/passkeys/verify" } }));
 * ```
 */
export function PasskeyRegister(props: PasskeyRegisterProps): ReactElement {
  assertThisReact("PasskeyRegister");
  return c.PasskeyRegister(props);
}

/**
 * The card that holds a page: `<main>`, a heading, an optional sentence, the content. For a
 * site's own pages that sit beside the sign-in pages.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { AuthCard } from "@gatehouse/gatehouse/react";
 * h(AuthCard, { title: "Signed out" }, h("p", null, "See you soon."));
 * ```
 */
export function AuthCard(props: AuthCardProps<ReactNode>): ReactElement {
  assertThisReact("AuthCard");
  return c.AuthCard(props);
}

/**
 * A row of secondary links; links without an `href` are left out, and nothing is rendered
 * when none is left.
 *
 * @example
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { AuthLinks } from "@gatehouse/gatehouse/react";
 * h(AuthLinks, { links: [{ href: "/login", label: "Back to sign in" }] });
 * ```
 */
export function AuthLinks(props: AuthLinksProps): ReactElement | null {
  assertThisReact("AuthLinks");
  return c.AuthLinks(props);
}

/**
 * The form every page is made of: a plain `<form method="post">` that, once hydrated, posts
 * with `fetch`, shows errors in words in an `aria-live` region and calls `onSuccess`.
 *
 * @example A page of a site's own
 * ```ts ignore
 * import { createElement as h } from "react";
 * import { AuthForm } from "@gatehouse/gatehouse/react";
 * h(AuthForm, {
 *   idPrefix: "invite",
 *   action: "/api/invite",
 *   fields: [{ name: "email", label: "E-mail", type: "email", autocomplete: "email" }],
 *   submitLabel: "Invite",
 *   pendingLabel: "Inviting…",
 * });
 * ```
 */
export function AuthForm(props: AuthFormProps): ReactElement {
  assertThisReact("AuthForm");
  // AuthForm holds state: rendered as its own element so its hooks belong to it.
  return runtime.createElement(c.AuthForm, props);
}

/**
 * The element for a page named in JSON data: the component with its props, `onSuccess`, and
 * its SSO buttons in `ssoSlot`.
 *
 * @example
 * ```ts ignore
 * import { renderToString } from "react-dom/server";
 * import { authPageElement } from "@gatehouse/gatehouse/react";
 * renderToString(authPageElement({ page: "forgot", props: { loginHref: "/login" } }));
 * ```
 */
export function authPageElement(data: AuthPageData, onSuccess?: OnSuccess): ReactElement {
  return authPageNode(runtime, c, data, onSuccess);
}

/** Options of the React build's {@linkcode renderAuthDocument}. */
export interface ReactAuthDocumentOptions extends AuthDocumentOptions {
  /** `renderToString` of `react-dom/server`. */
  renderToString(element: ReactElement): string;
}

/**
 * A complete HTML document for a page, server-rendered with the given `renderToString`, with
 * its props embedded as JSON so the script at `scriptSrc` can hydrate it. Without `scriptSrc`
 * it is plain HTML that works with JavaScript off.
 *
 * @example
 * ```ts ignore
 * import { renderToString } from "react-dom/server";
 * import { renderAuthDocument } from "@gatehouse/gatehouse/react";
 * const html = renderAuthDocument(
 *   { page: "login", props: { signupHref: "/signup" }, sso: { providers: ["google"] } },
 *   { renderToString, scriptSrc: "/auth-client.js" },
 * );
 * new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
 * ```
 */
export function renderAuthDocument(data: AuthPageData, options: ReactAuthDocumentOptions): string {
  const safe = safeAuthPageData(data);
  let body: string;
  try {
    body = options.renderToString(authPageElement(safe));
  } catch (e) {
    // React 18's renderer, given an element of another copy of React, says only this
    if (/Objects are not valid as a React child/.test((e as Error)?.message ?? "")) {
      throw Object.assign(otherReactError("renderAuthDocument"), { cause: e });
    }
    throw e;
  }
  return authDocumentHtml(body, safe, options);
}

/** Options of the React build's {@linkcode hydrateAuthPage}. */
export interface ReactHydrateOptions extends HydrateOptions {
  /** `hydrateRoot` of `react-dom/client`. */
  hydrateRoot(container: Element, element: ReactElement): unknown;
}

/**
 * In the browser: hydrates the page that {@linkcode renderAuthDocument} rendered, so forms
 * post with `fetch`, errors appear inline and `onSuccess` runs. Returns false when the
 * document holds no page.
 *
 * @example The client script served at `scriptSrc`
 * ```ts ignore
 * import { hydrateRoot } from "react-dom/client";
 * import { hydrateAuthPage } from "@gatehouse/gatehouse/react";
 * hydrateAuthPage({ hydrateRoot, onSuccess: (r) => location.assign(r.redirect ?? "/") });
 * ```
 */
export function hydrateAuthPage(options: ReactHydrateOptions): boolean {
  const found = findAuthPage(options);
  if (!found) return false;
  options.hydrateRoot(found.root as Element, authPageElement(found.data, found.onSuccess));
  return true;
}
