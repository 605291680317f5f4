/**
 * Gatehousefile syntax of `log_append [<matcher>] [<]<field> <value>` (adds a field to the
 * access log entry; `<` appends before the response is written).
 *
 * @module
 */
import type { Dispenser } from "../../../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { LogAppendConfig } from "./config.ts";

/** `log_append`. */
export function parseLogAppend(d: Dispenser): LogAppendConfig {
  d.next();
  if (!d.nextArg()) throw d.argErr();
  let key = d.val();
  if (!d.nextArg()) throw d.argErr();
  const out: LogAppendConfig = { handler: "log_append" };
  if (key.startsWith("<") && key.length > 1) {
    out.early = true;
    key = key.slice(1);
  }
  if (key !== "") out.key = key;
  if (d.val() !== "") out.value = d.val();
  return out;
}

/** The Gatehousefile syntax of `log_append`. */
export const syntax: SyntaxSet = { handlerDirectives: { log_append: parseLogAppend } };
