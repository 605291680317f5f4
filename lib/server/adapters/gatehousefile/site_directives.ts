/**
 * Directives about the site itself rather than its handlers: `bind` (listener addresses and
 * protocols) and `log` (access logging; syntax in `logs.ts`).
 *
 * @module
 */
import type { Helper } from "../../caddyfile/helper.ts";
import { parseBindArgs } from "./options.ts";
import type { ConfigValue } from "../../caddyfile/types.ts";

/** `bind <addresses...> [{ protocols <h1|h2|h2c|h3...> }]`. */
export function parseBind(h: Helper): ConfigValue[] {
  return [{ class: "bind", value: parseBindArgs(h, false, (w) => h.ctx.warnings.push(w)) }];
}
