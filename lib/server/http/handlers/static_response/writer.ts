/**
 * `static_response` → `respond`, `abort` or `redir` (the three directives that make it).
 *
 * @module
 */
import type { Token } from "../../../caddyfile/lexer.ts";
import type { Directive, HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { type Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { redirectPage } from "./caddyfile.ts";
import type { StaticResponseConfig } from "./config.ts";
import { bare, type Line, line, statusText, word } from "../../../caddyfile/writer/tokens.ts";

function isStatus(s: string): boolean {
  return /^\d{3}$/.test(s) && Number(s) > 0;
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
    if (redirectPage(to) !== v.body) return;
    return { name: "redir", args: [word(to), bare("html")] };
  }
}

/** `static_response` → `respond`, `redir` or `abort`. */
export const writer: HandlerReverser<StaticResponseConfig> = (f: Fields<StaticResponseConfig>) => {
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
