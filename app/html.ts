/**
 * HTML shells shared by the reference app's sites: a plain page for simple screens and the
 * sign-in card of `react.ts` for pages that sit beside the sign-in pages.
 *
 * @module
 */
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { AuthCard } from "../preact.ts";
import { escapeHtml } from "../d1.ts";

export { escapeHtml };

function head(title: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${
    escapeHtml(title)
  }</title><meta name="viewport" content="width=device-width, initial-scale=1"></head>`;
}

/** A plain page: the title as heading, then `body` (HTML the caller escaped). */
export function plainPage(title: string, body: string, width = "28rem"): string {
  return head(title) +
    `<body style="font-family:system-ui;max-width:${width};margin:3rem auto;padding:0 1rem">` +
    `<h1>${escapeHtml(title)}</h1>${body}</body></html>`;
}

/** A page in the sign-in pages' card, with `body` (HTML the caller escaped) inside it. */
export function cardPage(title: string, body: string): string {
  return head(title) + `<body style="margin:0">` +
    renderToString(
      h(AuthCard, { title }, h("div", { dangerouslySetInnerHTML: { __html: body } })),
    ) +
    `</body></html>`;
}
