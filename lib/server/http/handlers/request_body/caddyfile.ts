/**
 * Gatehousefile syntax of the `request_body` handler:
 * `request_body [<matcher>] { max_size <size>; set <body> }`.
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { parseSize } from "../../../caddyfile/values.ts";
import type { RequestBodyDirective } from "./config.ts";

/** `request_body`. */
export function parseRequestBody(h: Helper): RequestBodyDirective {
  h.next();
  const rb: RequestBodyDirective = { handler: "request_body" };
  for (const n = h.nesting(); h.nextBlock(n);) {
    switch (h.val()) {
      case "max_size": {
        const a = h.allArgs(1);
        if (!a) throw h.argErr();
        try {
          const v = parseSize(a[0]);
          if (v !== 0) rb.max_size = v;
        } catch (e) {
          throw h.err(`parsing max_size: ${(e as Error).message}`);
        }
        break;
      }
      case "set": {
        const a = h.allArgs(1);
        if (!a) throw h.argErr();
        if (a[0] !== "") rb.set = a[0];
        break;
      }
      default:
        throw h.unknownSubdirective(
          ["max_size", "set"],
          "unrecognized request_body subdirective '%s'",
        );
    }
  }
  return rb;
}

/** The Gatehousefile syntax of `request_body`. */
export const syntax: SyntaxSet = { handlerDirectives: { request_body: parseRequestBody } };
