/**
 * Gatehousefile syntax of the `static_response` handler: the `respond`, `redir` and `abort`
 * directives.
 *
 * ```
 * respond [<matcher>] <status>|<body> [<status>] { body <text>; close }
 * redir [<matcher>] <to> [<code>|permanent|temporary|html]
 * abort [<matcher>]
 * ```
 *
 * @module
 */
import type { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { StaticResponseConfig } from "./config.ts";
import { weakString } from "../../../caddyfile/values.ts";

/** `respond`: status and/or body, optional `body` and `close` subdirectives. */
export function parseRespond(d: Dispenser): StaticResponseConfig {
  d.next();
  const h: StaticResponseConfig = { handler: "static_response" };
  const args = d.remainingArgs();
  if (args.length === 1) {
    if (args[0].length === 3 && /^[+-]?\d+$/.test(args[0]) && Number(args[0]) > 0) {
      h.status_code = weakString(args[0]) as string | number;
    } else if (args[0] !== "") h.body = args[0];
  } else if (args.length === 2) {
    if (args[0] !== "") h.body = args[0];
    if (args[1] !== "") h.status_code = weakString(args[1]) as string | number;
  } else throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    switch (d.val()) {
      case "body": {
        if (h.body) throw d.err("body already specified");
        const a = d.allArgs(1);
        if (!a) throw d.argErr();
        if (a[0] !== "") h.body = a[0];
        break;
      }
      case "close":
        if (h.close) throw d.err("close already specified");
        h.close = true;
        break;
      default:
        throw d.unknownSubdirective(["body", "close"], "unrecognized subdirective '%s'");
    }
  }
  return h;
}

/** Go's `html.EscapeString`. */
export const escapeHTML = (s: string): string =>
  s.replace(
    /[<>&'"]/g,
    (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&#39;", '"': "&#34;" })[c]!,
  );

/** The page `redir <to> html` answers with: it sends browsers on to `to`. */
export function redirectPage(to: string): string {
  const safe = escapeHTML(to);
  return `<!DOCTYPE html>
<html>
	<head>
		<title>Redirecting...</title>
		<script>window.location.replace("${safe}");</script>
		<meta http-equiv="refresh" content="0; URL='${safe}'">
	</head>
	<body>Redirecting to <a href="${safe}">${safe}</a>...</body>
</html>
`;
}

/** `redir`: a redirect (302 by default), or an HTML page that redirects browsers. */
export function parseRedir(h: Helper): StaticResponseConfig {
  h.next();
  if (!h.nextArg()) throw h.argErr();
  const to = h.val();
  let code = h.nextArg() ? h.val() : "";
  let body = "";
  let headers: Record<string, string[]> | undefined;
  if (code === "permanent") code = "301";
  else if (code === "temporary" || code === "") code = "302";
  else if (code === "html") {
    body = redirectPage(to);
    headers = { "Content-Type": ["text/html; charset=utf-8"] };
    code = "200";
  } else if (!code.startsWith("{")) {
    if (!/^[+-]?\d+$/.test(code)) {
      throw h.err(`Not a supported redir code type or not valid integer: '${code}'`);
    }
    const n = Number(code);
    if (n < 300 || (n > 399 && n !== 401)) {
      throw h.err(`Redir code not in the 3xx range or 401: '${n}'`);
    }
  }
  if (code !== "200") headers = { Location: [to] };
  const out: StaticResponseConfig = {
    handler: "static_response",
    status_code: weakString(code) as string | number,
  };
  if (headers) out.headers = headers;
  if (body) out.body = body;
  return out;
}

/** `abort`: close the connection without a response. */
export function parseAbort(h: Helper): StaticResponseConfig {
  h.next();
  if (h.next() || h.nextBlock(0)) throw h.argErr();
  return { handler: "static_response", abort: true };
}

/** The Gatehousefile syntax of `static_response`. */
export const syntax: SyntaxSet = {
  handlerDirectives: { respond: parseRespond, redir: parseRedir, abort: parseAbort },
};
