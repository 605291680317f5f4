/**
 * `static_response` → `respond`, `abort` or `redir` (the three directives that make it).
 *
 * @module
 */
import type { Token } from "../../../../caddyfile/lexer.ts";
import type { Directive, HandlerReverser } from "../context.ts";
import { type Fields, isObject } from "../problems.ts";
import { bare, type Line, line, word } from "../tokens.ts";

/** Status code as the adapter writes it (a number when it is one). */
export function statusText(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === "number" && Number.isInteger(v)) return String(v);
  if (typeof v === "string") return v;
  return undefined;
}

function isStatus(s: string): boolean {
  return /^\d{3}$/.test(s) && Number(s) > 0;
}

/** Go's html.EscapeString. */
function escapeHtml(s: string): string {
  return s.replace(
    /[<>&'"]/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&#39;", '"': "&#34;" })[c]!,
  );
}

function htmlRedirBody(to: string): string {
  const t = escapeHtml(to);
  return `<!DOCTYPE html>
<html>
	<head>
		<title>Redirecting...</title>
		<script>window.location.replace("${t}");</script>
		<meta http-equiv="refresh" content="0; URL='${t}'">
	</head>
	<body>Redirecting to <a href="${t}">${t}</a>...</body>
</html>
`;
}

function unescapeHtml(s: string): string {
  return s.replace(
    /&(lt|gt|amp|#39|#34);/g,
    (_m, e) => ({ lt: "<", gt: ">", amp: "&", "#39": "'", "#34": '"' })[e as string]!,
  );
}

function redir(v: Record<string, unknown>): Directive | undefined {
  const keys = Object.keys(v).filter((k) => k !== "handler").sort().join(",");
  const status = statusText(v.status_code);
  const headers = v.headers;
  if (!isObject(headers) || status === undefined) return undefined;
  if (keys === "headers,status_code") {
    const loc = headers.Location;
    if (Object.keys(headers).length !== 1 || !Array.isArray(loc) || loc.length !== 1) return;
    if (typeof loc[0] !== "string") return;
    const n = Number(status);
    const placeholder = status.startsWith("{");
    if (!placeholder && !(isStatus(status) && ((n >= 300 && n <= 399) || n === 401))) return;
    const args = [word(loc[0])];
    if (status !== "302") args.push(word(status));
    return { name: "redir", args, noMatcherToken: false };
  }
  if (keys === "body,headers,status_code" && status === "200") {
    const ct = headers["Content-Type"];
    if (Object.keys(headers).length !== 1 || !Array.isArray(ct) || ct.length !== 1) return;
    if (ct[0] !== "text/html; charset=utf-8" || typeof v.body !== "string") return;
    const m = v.body.match(/<a href="([^"]*)">/);
    if (!m) return;
    const to = unescapeHtml(m[1]);
    if (htmlRedirBody(to) !== v.body) return;
    return { name: "redir", args: [word(to), bare("html")] };
  }
}

/** `static_response`. */
export const staticResponse: HandlerReverser = (f: Fields) => {
  const r = redir(f.value);
  if (r) {
    f.skip("status_code", "headers", "body");
    return r;
  }
  if (f.bool("abort") === true) return { name: "abort", args: [] };
  const status = statusText(f.take("status_code"));
  if (f.has("status_code") && status === undefined) {
    f.problems.add(f.at("status_code"), "must be a number or a string");
    return null;
  }
  const body = f.str("body") ?? "";
  const close = f.bool("close") === true;
  const block: Line[] = [];
  const args: Token[] = [];
  if (status === undefined) {
    if (isStatus(body)) block.push(line(["body", body]));
    else if (body !== "") args.push(word(body));
  } else if (body === "" && isStatus(status)) args.push(word(status));
  else args.push(word(body), word(status));
  if (close) block.push(line(["close"]));
  return { name: "respond", args, block: block.length ? block : undefined };
};
