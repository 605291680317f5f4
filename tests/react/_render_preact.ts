/**
 * Renders every case of `_cases.ts` with the Preact build (`@gatehouse/gatehouse/preact`) and
 * `preact-render-to-string`, and prints `{major, html, document}` as JSON, `major` being the
 * Preact that rendered (10 or 11, read from its elements' mark). Run under an import map of one
 * Preact version:
 * `deno run --check --no-config --import-map tests/react/preact10.importmap.json tests/react/_render_preact.ts`.
 */
import { h, type VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import * as build from "@gatehouse/gatehouse/preact";
import { cases } from "./_cases.ts";

const mark = (h("i", null) as { constructor?: unknown }).constructor;
const major = mark === undefined ? 10 : mark === Symbol.for("pv") ? 11 : null;
const html: Record<string, string> = {};
for (const [name, element] of Object.entries(cases(build, h as never))) {
  html[name] = renderToString(element as VNode);
}
const document = build.renderAuthDocument(
  { page: "login", props: { error: "<b>x</b>", next: "/n" }, sso: { providers: ["github"] } },
  { scriptSrc: "/client.js" },
);
console.log(JSON.stringify({ major, html, document }));
