/**
 * Whole pages, for any runtime: the page named in JSON data as an element, a complete HTML
 * document around a server-rendered page that carries its own props, and the lookup that
 * finds those props again in the browser for hydration. The React and Preact builds wrap
 * these with their own `renderToString` and `hydrate`.
 *
 * @module
 */
import type { OnSuccess } from "./form.ts";
import type { ForgotPasswordPageProps } from "./forgot.ts";
import type { LoginPageProps } from "./login.ts";
import { isDescribedError } from "./messages.ts";
import type { AuthComponents } from "./pages.ts";
import type { ResetPasswordPageProps } from "./reset.ts";
import type { AuthRuntime } from "./runtime.ts";
import type { SignupPageProps } from "./signup.ts";
import type { SsoButtonsProps } from "./sso.ts";
import type { VerifyEmailPageProps } from "./verify.ts";
import type { SecondFactorPageProps } from "./second_factor.ts";
import type { BackupCodesPageProps, TotpSetupPageProps } from "./totp_setup.ts";

/** The pages a document can hold, by name. */
export interface AuthPages {
  /** `LoginPage` */
  login: LoginPageProps;
  /** `SignupPage` */
  signup: SignupPageProps;
  /** `ForgotPasswordPage` */
  forgot: ForgotPasswordPageProps;
  /** `ResetPasswordPage` */
  reset: ResetPasswordPageProps;
  /** `VerifyEmailPage` */
  verify: VerifyEmailPageProps;
  /** `SecondFactorPage` */
  "second-factor": SecondFactorPageProps;
  /** `TotpSetupPage` */
  "totp-setup": TotpSetupPageProps;
  /** `BackupCodesPage` */
  "backup-codes": BackupCodesPageProps;
}

/**
 * A page and its props as JSON: everything but the callbacks and nodes, plus the props of
 * the `SsoButtons` that fill `ssoSlot` (login and sign-up pages).
 */
export type AuthPageData = {
  [K in keyof AuthPages]: {
    page: K;
    props: Omit<AuthPages[K], "onSuccess" | "ssoSlot">;
    sso?: SsoButtonsProps;
  };
}[keyof AuthPages];

/** Options of `renderAuthDocument`. */
export interface AuthDocumentOptions {
  /** The document's `<title>`; default the page's heading. */
  title?: string;
  /** URL of the client script that calls `hydrateAuthPage`; none: the page stays plain HTML. */
  scriptSrc?: string;
  /** The document's language; default `en`. */
  lang?: string;
}

/** The part of a DOM `Document` that hydration uses. */
export interface HydrationDocument {
  /** Finds an element by id (`Document.getElementById`). */
  getElementById(id: string): unknown;
}

/** Options of `hydrateAuthPage` shared by every runtime. */
export interface HydrateOptions {
  /** Called after a successful submission; default: go to the answer's `redirect`, if any. */
  onSuccess?: OnSuccess;
  /** The document to hydrate (a DOM `Document`); default the global `document`. */
  document?: HydrationDocument;
}

const ROOT_ID = "gatehouse-auth";
const DATA_ID = "gatehouse-auth-data";

/** The element for a page: the component with its props, `onSuccess`, and its SSO buttons. */
export function authPageNode<E>(
  rt: AuthRuntime<E>,
  c: AuthComponents<E>,
  data: AuthPageData,
  onSuccess?: OnSuccess,
): E {
  const h = rt.createElement;
  const ssoSlot = data.sso ? h(c.SsoButtons, data.sso) : undefined;
  switch (data.page) {
    case "login":
      return h(c.LoginPage, { ...data.props, onSuccess, ssoSlot });
    case "signup":
      return h(c.SignupPage, { ...data.props, onSuccess, ssoSlot });
    case "forgot":
      return h(c.ForgotPasswordPage, { ...data.props, onSuccess });
    case "reset":
      return h(c.ResetPasswordPage, { ...data.props, onSuccess });
    case "verify":
      return h(c.VerifyEmailPage, { ...data.props, onSuccess });
    case "second-factor":
      return h(c.SecondFactorPage, { ...data.props, onSuccess });
    case "totp-setup":
      return h(c.TotpSetupPage, { ...data.props, onSuccess });
    case "backup-codes":
      return h(c.BackupCodesPage, { ...data.props });
  }
}

const titles: Record<AuthPageData["page"], string> = {
  login: "Sign in",
  signup: "Create an account",
  forgot: "Reset your password",
  reset: "Choose a new password",
  verify: "Check your e-mail",
  "second-factor": "Two-step sign-in",
  "totp-setup": "Set up an authenticator app",
  "backup-codes": "Your backup codes",
};

/**
 * The data with an error code nobody described (e.g. a hand-edited `?oauth_error=`) replaced
 * by `unknown`, so the code never reaches the page, not even inside the hydration data.
 */
export function safeAuthPageData(data: AuthPageData): AuthPageData {
  const props = data.props as { error?: string; messages?: Record<string, string> };
  const error = props.error;
  if (error !== undefined && !isDescribedError(error, props.messages)) {
    return { ...data, props: { ...data.props, error: "unknown" } } as AuthPageData;
  }
  return data;
}

/**
 * A complete HTML document around `body` (the server-rendered page of `data`, made safe with
 * {@linkcode safeAuthPageData}), with the props embedded as JSON for hydration.
 */
export function authDocumentHtml(
  body: string,
  data: AuthPageData,
  options: AuthDocumentOptions,
): string {
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

/** What hydration needs: the root element, the page data and the `onSuccess` to use. */
export interface FoundAuthPage {
  /** The element holding the server-rendered page (a DOM `Element`). */
  root: unknown;
  /** The page and props embedded by {@linkcode authDocumentHtml}. */
  data: AuthPageData;
  /** The caller's `onSuccess`, or one that goes to the answer's `redirect`. */
  onSuccess: OnSuccess;
}

/** Finds the page of {@linkcode authDocumentHtml} in a document; null when there is none. */
export function findAuthPage(options: HydrateOptions): FoundAuthPage | null {
  const doc = options.document ?? (globalThis as { document?: HydrationDocument }).document;
  const root = doc?.getElementById(ROOT_ID);
  const raw = (doc?.getElementById(DATA_ID) as { textContent?: string | null } | null)
    ?.textContent;
  if (!root || !raw) return null;
  const onSuccess: OnSuccess = options.onSuccess ?? ((result) => {
    if (typeof result.redirect === "string") globalThis.location.assign(result.redirect);
  });
  return { root, data: JSON.parse(raw) as AuthPageData, onSuccess };
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(
    /"/g,
    "&quot;",
  );
}
