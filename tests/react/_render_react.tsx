/**
 * Renders every case of `_cases.ts` with the React build (`react.ts`) and `react-dom/server`,
 * and prints `{version, html, document}` as JSON. Run under the import map of one React version:
 * `deno run --check --no-config --import-map tests/react/react18.importmap.json tests/react/_render_react.tsx`.
 */
// @ts-types="@types/react"
import { createElement, type ReactElement, version } from "react";
import { renderToString } from "react-dom/server";
import * as build from "../../react.ts";
import { cases } from "./_cases.ts";

const html: Record<string, string> = {};
for (const [name, element] of Object.entries(cases(build, createElement as never))) {
  html[name] = renderToString(element as ReactElement);
}
const document = build.renderAuthDocument(
  { page: "login", props: { error: "<b>x</b>", next: "/n" }, sso: { providers: ["github"] } },
  { renderToString, scriptSrc: "/client.js" },
);
console.log(JSON.stringify({ version, html, document }));
