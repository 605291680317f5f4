/**
 * The console's page shell: a skip link, a header with the product name, the screens the
 * operator may use (the current one marked for screen readers), who is signed in with a
 * sign-out button, then the page's heading, its notice or alert in words, and its content.
 *
 * @module
 */
import { type ComponentChildren, h, type JSX } from "preact";
import { renderToString } from "preact-render-to-string";
import { escapeHtml as esc } from "../html.ts";
import { PostForm } from "./ui.ts";

/** One link of the navigation. */
export interface NavItem {
  /** Absolute path. */
  href: string;
  /** Text. */
  title: string;
  /** True for the screen being shown. */
  current: boolean;
}

/** Everything a page shows. */
export interface PageOptions {
  /** The `<h1>` and the title. */
  title: string;
  /** A sentence under the heading. */
  lead?: string;
  /** Good news in words (announced politely). */
  notice?: string;
  /** What went wrong in words (announced at once). */
  error?: string;
  /** The content. */
  body: ComponentChildren;
  /** HTTP status (default 200). */
  status?: number;
}

/** What the shell needs to know about the console and the operator. */
export interface ShellContext {
  /** Mount path. */
  base: string;
  /** The navigation (empty for pages shown to someone who is not signed in). */
  nav: NavItem[];
  /** Who is signed in, e.g. `ada@example.com (owner)`; null when nobody is. */
  who: string | null;
  /** CSRF token for the sign-out form. */
  csrf: string;
}

/** The document head shared with the console's sign-in pages. */
export function documentHead(base: string, title: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${esc(title)} · Gatehouse console</title>` +
    `<link rel="icon" href="/favicon.svg" type="image/svg+xml">` +
    `<link rel="stylesheet" href="${base}/console.css">` +
    `<script type="module" src="${base}/console.js"></script></head>`;
}

function header(ctx: ShellContext): JSX.Element {
  return h(
    "header",
    { class: "top" },
    h(
      "div",
      { class: "top-inner" },
      h("a", { class: "brand", href: `${ctx.base}/` }, "Gatehouse console"),
      ctx.nav.length
        ? h(
          "nav",
          { class: "nav", "aria-label": "Console" },
          h(
            "ul",
            null,
            ctx.nav.map((n) =>
              h(
                "li",
                { key: n.href },
                h("a", { href: n.href, "aria-current": n.current ? "page" : undefined }, n.title),
              )
            ),
          ),
        )
        : null,
      ctx.who
        ? h(
          "div",
          { class: "who" },
          // "Signed in as" is read out, not shown: the header holds on one line at 1280 px
          h(
            "span",
            null,
            h("span", { class: "sr-only" }, "Signed in as "),
            h("strong", null, ctx.who),
          ),
          h(PostForm, {
            action: `${ctx.base}/logout`,
            csrf: ctx.csrf,
            label: "Sign out",
            variant: "secondary",
          }),
        )
        : null,
    ),
  );
}

/** A whole console page as HTML. */
export function renderShell(ctx: ShellContext, page: PageOptions): string {
  const main = h(
    "main",
    { id: "main", tabIndex: -1 },
    h("h1", null, page.title),
    page.lead ? h("p", { class: "lead" }, page.lead) : null,
    h(
      "div",
      { role: "status", "aria-live": "polite" },
      page.notice ? h("p", { class: "notice" }, page.notice) : null,
    ),
    h("div", { role: "alert" }, page.error ? h("p", { class: "alert" }, page.error) : null),
    page.body,
  );
  return documentHead(ctx.base, page.title) +
    `<body><a class="skip" href="#main">Skip to content</a>` +
    renderToString(h("div", null, header(ctx), main)) + `</body></html>`;
}

/** The response for a page: HTML, never cached (pages show private data). */
export function pageResponse(ctx: ShellContext, page: PageOptions): Response {
  return new Response(renderShell(ctx, page), {
    status: page.status ?? 200,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
}
