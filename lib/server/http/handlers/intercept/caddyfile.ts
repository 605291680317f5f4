/**
 * Gatehousefile syntax of the `intercept` handler (act on the response of the next
 * handlers): `intercept [<matcher>] { @name <response matcher>; replace_status [@name] <code>;
 * handle_response [@name] { ... } }`.
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { parseNamedResponseMatcher } from "../../matchers/caddyfile.ts";
import type { ProxyParse } from "../reverse_proxy/caddyfile.ts";
import { finishHandleResponse, replaceStatus } from "../reverse_proxy/caddyfile_response.ts";
import type { InterceptConfig } from "./config.ts";

/** `intercept`. */
export function parseIntercept(h: Helper): InterceptConfig {
  const p: ProxyParse = {
    handler: { handler: "intercept" },
    matchers: new Map(),
    handleResponse: [],
  };
  h.next();
  for (const n = h.nesting(); h.nextBlock(n);) {
    if (h.val().startsWith("@")) {
      parseNamedResponseMatcher(h.newFromNextSegment(), p.matchers);
      continue;
    }
    switch (h.val()) {
      case "handle_response":
        p.handleResponse.push(h.newFromNextSegment());
        break;
      case "replace_status":
        p.handler.handle_response = [
          ...((p.handler.handle_response as unknown[]) ?? []),
          replaceStatus(h, p),
        ];
        break;
      default:
        throw h.unknownSubdirective(["handle_response", "replace_status"]);
    }
  }
  finishHandleResponse(h, p);
  return p.handler as InterceptConfig;
}

/** The Gatehousefile syntax of `intercept`. */
export const syntax: SyntaxSet = { handlerDirectives: { intercept: parseIntercept } };
