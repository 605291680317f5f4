/**
 * Directives about the site itself rather than its handlers: `bind` (listener addresses and
 * protocols) and `log` (access logging; syntax in `logs.ts`). Also the syntaxes of modules
 * the adapter names but that have no folder of their own here: `file_system` storage, and the
 * two no-op modules of Caddy's own test build — the `mock` DNS provider and the `dummy` client
 * certificate verifier — so that configs written against Caddy's test suite adapt (running
 * them fails with "module ... is not available").
 *
 * @module
 */
import type { Dispenser } from "../../caddyfile/dispenser.ts";
import type { Helper } from "../../caddyfile/helper.ts";
import { parseBindArgs } from "./options.ts";
import type { ConfigValue } from "../../caddyfile/types.ts";

/** `bind <addresses...> [{ protocols <h1|h2|h2c|h3...> }]`. */
export function parseBind(h: Helper): ConfigValue[] {
  return [{ class: "bind", value: parseBindArgs(h, false, (w) => h.ctx.warnings.push(w)) }];
}

/** `storage file_system [<root>] { root <path> }`. */
export function fileSystemStorage(d: Dispenser): Record<string, unknown> {
  if (!d.next()) throw d.err("expected tokens");
  let root = "";
  if (d.nextArg()) root = d.val();
  if (d.nextArg()) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "root") throw d.unknownSubdirective(["root"], "unrecognized parameter '%s'");
    if (!d.nextArg()) throw d.argErr();
    if (root !== "") throw d.err("root already set");
    root = d.val();
    if (d.nextArg()) throw d.argErr();
  }
  if (root === "") throw d.err("missing root path (to use default, omit storage config entirely)");
  return { root };
}

/** `dns mock [<argument>]`. */
export function mockDNSProvider(d: Dispenser): Record<string, unknown> {
  d.next();
  const out: Record<string, unknown> = {};
  if (d.nextArg()) out.argument = d.val();
  if (d.nextArg()) throw d.err(`unexpected argument '${d.val()}'`);
  return out;
}
