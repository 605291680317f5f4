/**
 * Gatehousefile syntax of `forward_auth`: a `reverse_proxy` that asks an authentication
 * service first (`GET <uri>` with `X-Forwarded-Method`/`-Uri`), lets the request through on
 * a 2xx answer, copying the listed response headers (`copy_headers A B>C`) into the request.
 *
 * ```
 * forward_auth [<matcher>] [<upstreams...>] {
 *     uri <to>   copy_headers <fields...>   <any reverse_proxy subdirective>
 * }
 * ```
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { ConfigValue, Route } from "../../../caddyfile/types.ts";
import { canonicalHeaderKey } from "../../../caddyfile/values.ts";
import { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { RouteConfig } from "../../routes.ts";
import type { ResponseHandlerConfig } from "../../response_handlers.ts";
import { parseProxySegment } from "./caddyfile_proxy.ts";
import { finishHandleResponse } from "./caddyfile_response.ts";

/** `forward_auth [<matcher>] [<upstreams...>] { uri <to>; copy_headers <fields...>; ... }`. */
export function parseForwardAuth(h: Helper): ConfigValue[] {
  if (!h.next()) throw h.argErr();
  const matcher = h.extractMatcherSet();
  const d = new Dispenser(h.nextSegment());
  let uri = "";
  const copy = new Map<string, string>();
  while (d.next()) {
    while (d.nextBlock(0)) {
      if (d.nesting() !== 1) continue;
      if (d.val() === "uri") {
        if (!d.nextArg()) throw d.argErr();
        if (uri !== "") throw d.err(`cannot re-declare uri: ${d.val()}`);
        uri = d.val();
        d.deleteN(2);
      } else if (d.val() === "copy_headers") {
        const args = d.remainingArgs();
        let hadBlock = false;
        for (const n = d.nesting(); d.nextBlock(n);) {
          hadBlock = true;
          args.push(d.val());
        }
        d.deleteN(args.length + 1);
        if (hadBlock) d.deleteN(2);
        for (const f of args) {
          if (f.includes(">")) {
            const parts = f.split(">");
            copy.set(parts[0], parts[1]);
          } else copy.set(f, f);
        }
        if (copy.size === 0) throw d.argErr();
      }
    }
  }
  d.reset();
  if (uri === "") throw d.err("the 'uri' subdirective is required");

  const copyRoutes: Route[] = [];
  for (const from of [...copy.keys()].sort()) {
    const to = canonicalHeaderKey(copy.get(from)!);
    const placeholder = `http.reverse_proxy.header.${canonicalHeaderKey(from)}`;
    copyRoutes.push({ handle: [{ handler: "headers", request: { delete: [to] } }] });
    copyRoutes.push({
      match: [{ not: [{ vars: { [`{${placeholder}}`]: [""] } }] }],
      handle: [{ handler: "headers", request: { set: { [to]: [`{${placeholder}}`] } } }],
    });
  }
  const good: ResponseHandlerConfig = {
    match: { status_code: [2] },
    routes: [{ handle: [{ handler: "vars" }] }, ...copyRoutes] as RouteConfig[],
  };
  d.next();
  const p = parseProxySegment(d, {
    handler: "reverse_proxy",
    headers: {
      request: {
        set: {
          "X-Forwarded-Method": ["{http.request.method}"],
          "X-Forwarded-Uri": ["{http.request.uri}"],
        },
      },
    },
    rewrite: { method: "GET", uri },
    handle_response: [good],
  });
  finishHandleResponse(h, p);
  const route: Route = { handle: [p.handler] };
  if (matcher) route.match = [matcher];
  return [{ class: "route", value: route }];
}

/** The Gatehousefile syntax of `forward_auth`. */
export const syntax: SyntaxSet = { directives: { forward_auth: parseForwardAuth } };
