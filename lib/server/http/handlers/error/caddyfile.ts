/**
 * Gatehousefile syntax of the `error` handler:
 * `error [<matcher>] <status>|<message> [<status>] { message <text> }`.
 *
 * @module
 */
import type { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import { weakString } from "../../../caddyfile/values.ts";
import type { ErrorConfig } from "./config.ts";

/** `error`: triggers an error with a status (and message). */
export function parseError(d: Dispenser): ErrorConfig {
  d.next();
  const h: ErrorConfig = { handler: "error" };
  const args = d.remainingArgs();
  if (args.length === 1) {
    if (args[0].length === 3 && /^[+-]?\d+$/.test(args[0]) && Number(args[0]) > 0) {
      h.status_code = weakString(args[0]) as string | number;
    } else if (args[0] !== "") h.error = args[0];
  } else if (args.length === 2) {
    if (args[0] !== "") h.error = args[0];
    if (args[1] !== "") h.status_code = weakString(args[1]) as string | number;
  } else throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "message") {
      throw d.unknownSubdirective(["message"], "unrecognized subdirective '%s'");
    }
    if (h.error) throw d.err("message already specified");
    const a = d.allArgs(1);
    if (!a) throw d.argErr();
    if (a[0] !== "") h.error = a[0];
  }
  return h;
}

/** The Gatehousefile syntax of `error`. */
export const syntax: SyntaxSet = { handlerDirectives: { error: parseError } };
