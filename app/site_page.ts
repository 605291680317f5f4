/**
 * The page shell of the demo sites' pages after sign-in (the owner's home, the account page
 * and what follows from it), in the console's and the sign-in pages' visual language: the
 * app's stylesheet inlined (the sites stand alone, wherever they are mounted), the icon, a
 * header with the site's name, who is signed in and a sign-out button, then a heading, a
 * notice or an alert in words, and the content. Also the styled refusal (403) for an e-mail a
 * site does not admit.
 *
 * @module
 */
import { type ComponentChildren, h } from "preact";
import { renderToString } from "preact-render-to-string";
import type { Context } from "hono";
import { escapeHtml as esc } from "./html.ts";
import { APP_CSS } from "./style.ts";

/** What a site page shows. */
export interface SitePageOptions {
  /** The site's name in the header. */
  site: string;
  /** Where the site's name links to. */
  home: string;
  /** The `<h1>` and the title. */
  title: string;
  /** A sentence under the heading. */
  lead?: string;
  /** Good news, in words. */
  notice?: string;
  /** What went wrong, in words. */
  error?: string;
  /** Who is signed in (shown in the header), if anyone. */
  who?: string;
  /** The sign-out form's action, shown with `who`. */
  signOut?: string;
  /** The content. */
  body: ComponentChildren;
  /** A module script (same origin) the page loads, e.g. to hydrate a widget. */
  script?: string;
}

/**
 * A whole page as HTML.
 *
 * @example
 * ```ts
 * import { h } from "preact";
 * import { sitePage } from "./site_page.ts";
 * const html = sitePage({ site: "Demo", home: "/", title: "Hello", body: h("p", null, "Hi") });
 * ```
 */
export function sitePage(p: SitePageOptions): string {
  const header = h(
    "header",
    { class: "top" },
    h(
      "div",
      { class: "top-inner" },
      h("a", { class: "brand", href: p.home }, p.site),
      p.who
        ? h(
          "div",
          { class: "who" },
          h("span", null, "Signed in as ", h("strong", null, p.who)),
          p.signOut
            ? h(
              "form",
              { method: "post", action: p.signOut, class: "inline" },
              h("button", { type: "submit", class: "secondary" }, "Sign out"),
            )
            : null,
        )
        : null,
    ),
  );
  const main = h(
    "main",
    { id: "main", tabIndex: -1 },
    h("h1", null, p.title),
    p.lead ? h("p", { class: "lead" }, p.lead) : null,
    h("div", { role: "status" }, p.notice ? h("p", { class: "notice" }, p.notice) : null),
    h("div", { role: "alert" }, p.error ? h("p", { class: "alert" }, p.error) : null),
    p.body,
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${esc(p.title === p.site ? p.title : `${p.title} · ${p.site}`)}</title>` +
    `<link rel="icon" href="/favicon.svg" type="image/svg+xml"><style>${APP_CSS}</style></head>` +
    `<body><a class="skip" href="#main">Skip to content</a>` +
    renderToString(h("div", null, header, main)) +
    (p.script ? `<script type="module" src="${esc(p.script)}"></script>` : "") + `</body></html>`;
}

/** A site page as a response (never cached: it shows private data). */
export function sitePageResponse(p: SitePageOptions, status = 200): Response {
  return new Response(sitePage(p), {
    status,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}

/**
 * The answer to an e-mail the site does not admit: 403 with a styled page that says so and
 * leads back (for a browser), or the plain `forbidden` of the spec (for any other client).
 */
export function forbiddenResponse(
  c: Context,
  o: { site: string; home: string; signIn: string; email?: string },
  headers: Record<string, string> = {},
): Response {
  const accept = c.req.header("accept") ?? "";
  if (!accept.includes("text/html")) {
    return new Response("forbidden", {
      status: 403,
      headers: { "content-type": "text/plain; charset=utf-8", ...headers },
    });
  }
  const res = sitePageResponse({
    site: o.site,
    home: o.home,
    title: "This account may not sign in here",
    error: o.email
      ? `${o.email} is not allowed to sign in to ${o.site}.`
      : `That account is not allowed to sign in to ${o.site}.`,
    body: [
      h(
        "p",
        { key: "why" },
        "The provider confirmed who you are, but this site only admits certain addresses. " +
          "Nothing was changed and you are not signed in.",
      ),
      h(
        "p",
        { key: "back" },
        h("a", { class: "button", href: o.signIn }, "Sign in with another account"),
        " ",
        h("a", { class: "button secondary", href: "/" }, "Back to the app"),
      ),
    ],
  }, 403);
  for (const [k, v] of Object.entries(headers)) res.headers.append(k, v);
  return res;
}
