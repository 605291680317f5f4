/**
 * Whole pages: server-render a sign-in page into an HTML document that carries its own props,
 * and hydrate that document in the browser so the form switches to `fetch` with inline errors.
 *
 * @module
 */
import type { AuthElement } from "./types.ts";
import { h, hydrate, type VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import type { OnSuccess } from "./form.ts";
import { isDescribedError } from "./messages.ts";
import { ForgotPasswordPage, type ForgotPasswordPageProps } from "./forgot.ts";
import { LoginPage, type LoginPageProps } from "./login.ts";
import { ResetPasswordPage, type ResetPasswordPageProps } from "./reset.ts";
import { SignupPage, type SignupPageProps } from "./signup.ts";
import { SsoButtons, type SsoButtonsProps } from "./sso.ts";
import { VerifyEmailPage, type VerifyEmailPageProps } from "./verify.ts";

/** The pages a document can hold, by name. */
export interface AuthPages {
  /** {@linkcode LoginPage} */
  login: LoginPageProps;
  /** {@linkcode SignupPage} */
  signup: SignupPageProps;
  /** {@linkcode ForgotPasswordPage} */
  forgot: ForgotPasswordPageProps;
  /** {@linkcode ResetPasswordPage} */
  reset: ResetPasswordPageProps;
  /** {@linkcode VerifyEmailPage} */
  verify: VerifyEmailPageProps;
}

/**
 * A page and its props as JSON: everything but the callbacks and nodes, plus the props of
 * the {@linkcode SsoButtons} that fill `ssoSlot` (login and sign-up pages).
 */
export type AuthPageData = {
  [K in keyof AuthPages]: {
    page: K;
    props: Omit<AuthPages[K], "onSuccess" | "ssoSlot">;
    sso?: SsoButtonsProps;
  };
}[keyof AuthPages];

/** Options of {@linkcode renderAuthDocument}. */
export interface AuthDocumentOptions {
  /** The document's `<title>`; default the page's heading. */
  title?: string;
  /** URL of the client script that calls {@linkcode hydrateAuthPage}; none: the page stays plain HTML. */
  scriptSrc?: string;
  /** The document's language; default `en`. */
  lang?: string;
}

const ROOT_ID = "gatehouse-auth";
const DATA_ID = "gatehouse-auth-data";

/**
 * The element for a page: the component with its props, `onSuccess`, and its SSO buttons.
 *
 * @example
 * ```ts
 * import { renderToString } from "preact-render-to-string";
 * import { authPageElement } from "@gatehouse/gatehouse/react";
 * renderToString(authPageElement({ page: "forgot", props: { loginHref: "/login" } }));
 * ```
 */
export function authPageElement(data: AuthPageData, onSuccess?: OnSuccess): AuthElement {
  return pageNode(data, onSuccess);
}

// deno-lint-ignore no-explicit-any
function pageNode(data: AuthPageData, onSuccess?: OnSuccess): VNode<any> {
  const ssoSlot = data.sso ? h(SsoButtons, data.sso) : undefined;
  switch (data.page) {
    case "login":
      return h(LoginPage, { ...data.props, onSuccess, ssoSlot });
    case "signup":
      return h(SignupPage, { ...data.props, onSuccess, ssoSlot });
    case "forgot":
      return h(ForgotPasswordPage, { ...data.props, onSuccess });
    case "reset":
      return h(ResetPasswordPage, { ...data.props, onSuccess });
    case "verify":
      return h(VerifyEmailPage, { ...data.props, onSuccess });
  }
}

const titles: Record<AuthPageData["page"], string> = {
  login: "Sign in",
  signup: "Create an account",
  forgot: "Reset your password",
  reset: "Choose a new password",
  verify: "Check your e-mail",
};

/**
 * A complete HTML document for a page, server-rendered, with its props embedded as JSON so
 * the script at `scriptSrc` can hydrate it. Without `scriptSrc` it is plain HTML that works
 * with JavaScript off.
 *
 * @example
 * ```ts
 * import { renderAuthDocument } from "@gatehouse/gatehouse/react";
 * const html = renderAuthDocument(
 *   { page: "login", props: { signupHref: "/signup" }, sso: { providers: ["google"] } },
 *   { scriptSrc: "/auth-client.js" },
 * );
 * new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } });
 * ```
 */
export function renderAuthDocument(data: AuthPageData, options: AuthDocumentOptions = {}): string {
  // An error code nobody described (e.g. a hand-edited ?oauth_error=) is shown as the generic
  // sentence and never reaches the page, not even inside the hydration data.
  const error = data.props.error;
  if (error !== undefined && !isDescribedError(error, data.props.messages)) {
    data = { ...data, props: { ...data.props, error: "unknown" } } as AuthPageData;
  }
  const body = renderToString(pageNode(data));
  const title = options.title ?? data.props.title ?? titles[data.page];
  const json = JSON.stringify(data).replace(/</g, "\\u003c").replace(/\u2028|\u2029/g, "");
  const script = options.scriptSrc
    ? `<script type="module" src="${escapeHtml(options.scriptSrc)}"></script>`
    : "";
  return `<!doctype html><html lang="${escapeHtml(options.lang ?? "en")}"><head>` +
    `<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escapeHtml(title)}</title></head><body style="margin:0">` +
    `<div id="${ROOT_ID}">${body}</div>` +
    `<script type="application/json" id="${DATA_ID}">${json}</script>${script}</body></html>`;
}

/** The part of a DOM `Document` that hydration uses. */
export interface HydrationDocument {
  /** Finds an element by id (`Document.getElementById`). */
  getElementById(id: string): unknown;
}

/** Options of {@linkcode hydrateAuthPage}. */
export interface HydrateOptions {
  /** Called after a successful submission; default: go to the answer's `redirect`, if any. */
  onSuccess?: OnSuccess;
  /** The document to hydrate (a DOM `Document`); default the global `document`. */
  document?: HydrationDocument;
}

/**
 * In the browser: hydrates the page that {@linkcode renderAuthDocument} rendered, so forms
 * post with `fetch`, errors appear inline and `onSuccess` runs. Returns false when the
 * document holds no page.
 *
 * @example The client script served at `scriptSrc`
 * ```ts ignore
 * import { hydrateAuthPage } from "@gatehouse/gatehouse/react";
 * hydrateAuthPage({ onSuccess: (r) => location.assign(r.redirect ?? "/") });
 * ```
 */
export function hydrateAuthPage(options: HydrateOptions = {}): boolean {
  const doc = options.document ?? (globalThis as { document?: HydrationDocument }).document;
  const root = doc?.getElementById(ROOT_ID) as Element | null | undefined;
  const raw = (doc?.getElementById(DATA_ID) as Element | null | undefined)?.textContent;
  if (!root || !raw) return false;
  const data = JSON.parse(raw) as AuthPageData;
  const onSuccess: OnSuccess = options.onSuccess ?? ((result) => {
    if (typeof result.redirect === "string") globalThis.location.assign(result.redirect);
  });
  hydrate(pageNode(data, onSuccess), root);
  return true;
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  );
}
