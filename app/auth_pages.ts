/**
 * How the app's sites serve the sign-in pages of `react.ts` and answer their forms, in the
 * two modes the pages work in:
 *
 * - JavaScript off: the browser posts the form (`Accept: text/html,...`); the site answers
 *   with a 303 redirect, to the next page on success or back to the form's page with
 *   `?error=<code>` on failure (the page shows the code in words).
 * - JavaScript on (and any API client): the hydrated form posts with `fetch` and
 *   `Accept: application/json`; the site answers JSON: `{ok: true, redirect}` on success, or
 *   `{error: "<code>"}` with a 4xx status on failure.
 *
 * A request counts as a browser form post only when its `Accept` header names `text/html`;
 * everything else (fetch, curl's `*\/*`) gets JSON.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { type AuthPageData, renderAuthDocument } from "../preact.ts";
import { CLIENT_SCRIPT, clientBundle, serveClientBundle } from "./client_bundle.ts";

/** True when the request is a plain browser form post (JavaScript off). */
export function wantsHtml(c: Context): boolean {
  return (c.req.header("accept") ?? "").includes("text/html");
}

/**
 * Success: 303 to `next` for a form post, else JSON `{ok: true, redirect: next, ...extra}`.
 * Headers already set on the context (e.g. a session cookie) go with either.
 */
export function answerOk(c: Context, next: string, extra: Record<string, unknown> = {}): Response {
  c.header("cache-control", "no-store");
  if (wantsHtml(c)) return c.redirect(next, 303);
  return c.json({ ok: true, redirect: next, ...extra });
}

/**
 * Failure: 303 back to `page` with `?error=<code>` (plus `keep` parameters, e.g. the e-mail)
 * for a form post, else JSON `{error: code}` with `status`.
 */
export function answerError(
  c: Context,
  code: string,
  status: 400 | 401 | 403 | 409 | 429,
  page: string,
  keep: Record<string, string> = {},
): Response {
  c.header("cache-control", "no-store");
  if (wantsHtml(c)) {
    const url = new URL(page, "http://x");
    for (const [k, v] of Object.entries(keep)) if (v) url.searchParams.set(k, v);
    url.searchParams.set("error", code);
    return c.redirect(url.pathname + url.search, 303);
  }
  return c.json({ error: code }, status);
}

/**
 * An HTML response with a server-rendered sign-in page that hydrates from `<base>/auth-client.js`
 * when the bundle is available (mount {@linkcode serveClientBundle} there with
 * {@linkcode mountClientScript}).
 */
export async function renderPage(
  c: Context,
  base: string,
  data: AuthPageData,
  status: 200 | 400 | 401 | 403 | 429 = 200,
): Promise<Response> {
  const js = await clientBundle();
  const html = renderAuthDocument(data, {
    scriptSrc: js === null ? undefined : `${base}/${CLIENT_SCRIPT}`,
  });
  return c.html(html, status, { "cache-control": "no-store" });
}

/** Adds `GET /auth-client.js` (the hydration bundle) to a site. */
export function mountClientScript(app: Hono): void {
  app.get(`/${CLIENT_SCRIPT}`, serveClientBundle);
}

/**
 * The error code in query parameter `name`, for a page's `error` prop: anything not shaped
 * like a code becomes `unknown` (shown as the generic sentence); the pages never print it.
 */
export function codeParam(c: Context, name: string): string | undefined {
  const v = c.req.query(name);
  if (!v) return undefined;
  return /^[a-z0-9_]{1,64}$/i.test(v) ? v : "unknown";
}
