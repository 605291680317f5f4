/**
 * Gatehousefile syntax of the `push` handler (HTTP/2 server push):
 * `push [<matcher>] [<resource>] { [GET|HEAD] <resource>; headers { [+|-]<field> [<value>] } }`.
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { applyHeaderOp, type HeaderOps } from "../headers/caddyfile.ts";
import type { PushConfig, PushResource } from "./config.ts";

/** `push`. */
export function parsePush(h: Helper): PushConfig {
  h.next();
  const out: PushConfig = { handler: "push" };
  const resources: PushResource[] = [];
  const target = (t: string, method?: string) => {
    const r: PushResource = {};
    if (method) r.method = method;
    if (t !== "") r.target = t;
    resources.push(r);
  };
  if (h.nextArg()) target(h.val());
  for (const n = h.nesting(); h.nextBlock(n);) {
    switch (h.val()) {
      case "headers": {
        if (h.nextArg()) throw h.argErr();
        for (const m = h.nesting(); h.nextBlock(m);) {
          const args = [h.val(), ...h.remainingArgs()];
          const ops = (out.headers ??= {}) as HeaderOps;
          if (args.length > 3) throw h.argErr();
          try {
            applyHeaderOp(ops, false, args[0], args[1] ?? "", args[2]);
          } catch (e) {
            throw h.err((e as Error).message);
          }
        }
        break;
      }
      case "GET":
      case "HEAD": {
        const method = h.val();
        if (!h.nextArg()) throw h.argErr();
        target(h.val(), method);
        break;
      }
      default:
        target(h.val());
    }
  }
  if (resources.length > 0) out.resources = resources;
  return out;
}

/** The Gatehousefile syntax of `push`. */
export const syntax: SyntaxSet = { handlerDirectives: { push: parsePush } };
