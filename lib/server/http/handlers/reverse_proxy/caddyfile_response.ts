/**
 * Gatehousefile syntax of what acts on an upstream's response: `replace_status` and
 * `handle_response` blocks (of `reverse_proxy` and `intercept`), and the `copy_response` and
 * `copy_response_headers` handlers used inside them.
 *
 * @module
 */
import type { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { Helper } from "../../../caddyfile/helper.ts";
import { parseSegmentAsSubroute } from "../../../caddyfile/routes.ts";
import type { Handler } from "../../../caddyfile/types.ts";
import { weakString } from "../../../caddyfile/values.ts";
import type { ResponseMatcher } from "../../matchers/caddyfile.ts";
import type { ProxyParse } from "./caddyfile.ts";

type Obj = Record<string, unknown>;

/** `replace_status [@matcher] <status>`: one response handler that only changes the status. */
export function replaceStatus(d: Dispenser, p: ProxyParse): Obj {
  const args = d.remainingArgs();
  if (args.length !== 1 && args.length !== 2) {
    throw d.err("must have one or two arguments: an optional response matcher, and a status code");
  }
  const rh: Obj = {};
  const code = args[args.length - 1];
  if (args.length === 2) {
    if (!args[0].startsWith("@")) {
      throw d.err("must use a named response matcher, starting with '@'");
    }
    const m = p.matchers.get(args[0]);
    if (!m) throw d.err(`no named response matcher defined with name '${args[0].slice(1)}'`);
    rh.match = m;
  }
  if (code !== "") rh.status_code = weakString(code);
  if (d.nextBlock(d.nesting())) {
    throw d.err("cannot define routes for 'replace_status', use 'handle_response' instead.");
  }
  return rh;
}

/** Parses the pending `handle_response` blocks and orders handlers with matchers first. */
export function finishHandleResponse(h: Helper, p: ProxyParse): void {
  const handler = p.handler;
  const list = [...((handler.handle_response as Obj[]) ?? [])];
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
    const rh: Obj = {};
    if (match) rh.match = match;
    if (routes.length > 0) rh.routes = routes;
    list.push(rh);
  }
  const ordered = [...list.filter((r) => r.match), ...list.filter((r) => !r.match)];
  if (ordered.length > 0) handler.handle_response = ordered;
}

/** `copy_response [<matcher>] [<status>] { status <status> }` (inside `handle_response`). */
export function parseCopyResponse(d: Dispenser): Handler {
  d.next();
  const out: Handler = { handler: "copy_response" };
  const args = d.remainingArgs();
  if (args.length === 1 && /^[+-]?\d+$/.test(args[0]) && Number(args[0]) > 0) {
    out.status_code = weakString(args[0]);
    return out;
  }
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "status") {
      throw d.unknownSubdirective(["status"], "unrecognized subdirective '%s'");
    }
    if (!d.nextArg()) throw d.argErr();
    out.status_code = weakString(d.val());
  }
  return out;
}

/** `copy_response_headers { include <fields...>; exclude <fields...> }`. */
export function parseCopyResponseHeaders(d: Dispenser): Handler {
  d.next();
  const out: Handler = { handler: "copy_response_headers" };
  if (d.remainingArgs().length > 0) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    const k = d.val();
    if (k !== "include" && k !== "exclude") {
      throw d.unknownSubdirective(["include", "exclude"], "unrecognized subdirective '%s'");
    }
    const vals = d.remainingArgs();
    if (vals.length > 0) out[k] = [...((out[k] as string[]) ?? []), ...vals];
  }
  return out;
}
