/**
 * Gatehousefile syntax of what acts on an upstream's response: `replace_status` and
 * `handle_response` blocks (of `reverse_proxy` and `intercept`), and the `copy_response` and
 * `copy_response_headers` handlers used inside them.
 *
 * ```
 * copy_response [<matcher>] [<status>] { status <status> }
 * copy_response_headers [<matcher>] { include <fields...>; exclude <fields...> }
 * ```
 *
 * @module
 */
import type { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { parseSegmentAsSubroute } from "../../../caddyfile/routes.ts";
import type { Handler } from "../../../caddyfile/types.ts";
import { weakString } from "../../../caddyfile/values.ts";
import type { ResponseMatcher } from "../../matchers/caddyfile.ts";
import type { RouteConfig } from "../../routes.ts";
import type { ResponseHandlerConfig } from "../../response_handlers.ts";
import type { CopyResponseConfig, CopyResponseHeadersConfig } from "./copy_response.ts";

/** State of one handler with response handlers being read (its matchers and pending blocks). */
export interface ProxyParse<H extends { handler: string } = Handler> {
  /** The handler JSON so far. */
  handler: H;
  /** Named response matchers. */
  matchers: Map<string, ResponseMatcher>;
  /** `handle_response` blocks, parsed once the whole directive is read. */
  handleResponse: Dispenser[];
}

/** `replace_status [@matcher] <status>`: one response handler that only changes the status. */
export function replaceStatus(
  d: Dispenser,
  p: ProxyParse<{ handler: string }>,
): ResponseHandlerConfig {
  const args = d.remainingArgs();
  if (args.length !== 1 && args.length !== 2) {
    throw d.err("must have one or two arguments: an optional response matcher, and a status code");
  }
  const rh: ResponseHandlerConfig = {};
  const code = args[args.length - 1];
  if (args.length === 2) {
    if (!args[0].startsWith("@")) {
      throw d.err("must use a named response matcher, starting with '@'");
    }
    const m = p.matchers.get(args[0]);
    if (!m) throw d.err(`no named response matcher defined with name '${args[0].slice(1)}'`);
    rh.match = m;
  }
  if (code !== "") rh.status_code = weakString(code) as number | string;
  if (d.nextBlock(d.nesting())) {
    throw d.err("cannot define routes for 'replace_status', use 'handle_response' instead.");
  }
  return rh;
}

/** Parses the pending `handle_response` blocks and orders handlers with matchers first. */
export function finishHandleResponse(
  h: Helper,
  p: ProxyParse<{ handler: string }>,
): void {
  const handler = p.handler as { handle_response?: ResponseHandlerConfig[] };
  const list = [...(handler.handle_response ?? [])];
  for (const d of p.handleResponse) {
    d.next();
    const args = d.remainingArgs();
    if (args.length > 1) {
      throw d.err(
        `too many arguments for 'handle_response': only a single response matcher name is allowed, but got: [${
          args.join(" ")
        }]`,
      );
    }
    let match: ResponseMatcher | undefined;
    if (args.length === 1) {
      if (!args[0].startsWith("@")) {
        throw d.err("must use a named response matcher, starting with '@'");
      }
      match = p.matchers.get(args[0]);
      if (!match) throw d.err(`no named response matcher defined with name '${args[0].slice(1)}'`);
    }
    const routes = parseSegmentAsSubroute(h.withDispenser(d.newFromNextSegment()));
    const rh: ResponseHandlerConfig = {};
    if (match) rh.match = match;
    if (routes.length > 0) rh.routes = routes as unknown as RouteConfig[];
    list.push(rh);
  }
  const ordered = [...list.filter((r) => r.match), ...list.filter((r) => !r.match)];
  if (ordered.length > 0) handler.handle_response = ordered;
}

/** `copy_response [<matcher>] [<status>] { status <status> }` (inside `handle_response`). */
export function parseCopyResponse(d: Dispenser): CopyResponseConfig {
  d.next();
  const out: CopyResponseConfig = { handler: "copy_response" };
  const args = d.remainingArgs();
  if (args.length === 1 && /^[+-]?\d+$/.test(args[0]) && Number(args[0]) > 0) {
    out.status_code = weakString(args[0]) as number | string;
    return out;
  }
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "status") {
      throw d.unknownSubdirective(["status"], "unrecognized subdirective '%s'");
    }
    if (!d.nextArg()) throw d.argErr();
    out.status_code = weakString(d.val()) as number | string;
  }
  return out;
}

/** `copy_response_headers { include <fields...>; exclude <fields...> }`. */
export function parseCopyResponseHeaders(d: Dispenser): CopyResponseHeadersConfig {
  d.next();
  const out: CopyResponseHeadersConfig = { handler: "copy_response_headers" };
  if (d.remainingArgs().length > 0) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (k !== "include" && k !== "exclude") {
      throw d.unknownSubdirective(["include", "exclude"], "unrecognized subdirective '%s'");
    }
    const vals = d.remainingArgs();
    if (vals.length > 0) out[k] = [...(out[k] ?? []), ...vals];
  }
  return out;
}

/** The Gatehousefile syntax of `copy_response` and `copy_response_headers`. */
export const syntax: SyntaxSet = {
  handlerDirectives: {
    copy_response: parseCopyResponse,
    copy_response_headers: parseCopyResponseHeaders,
  },
};
