/**
 * Gatehousefile syntax of the DNS providers shipped here (used wherever a provider is named:
 * the global `dns` and `acme_dns` options, `tls { dns ... }`):
 *
 * ```
 * dns challtestsrv [<management url>]
 * dns challtestsrv {
 *     url <management url>
 * }
 * ```
 *
 * @module
 */
import type { Dispenser } from "../../caddyfile/dispenser.ts";

/**
 * `challtestsrv [<url>]` or a block with `url`.
 *
 * @example
 * ```ts ignore
 * registerSyntax("dns.providers.challtestsrv", challtestsrvSyntax);
 * ```
 */
export function challtestsrvSyntax(d: Dispenser): Record<string, unknown> {
  d.next(); // the provider's name
  const out: Record<string, unknown> = {};
  if (d.nextArg()) out.url = d.val();
  if (d.nextArg()) throw d.argErr();
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "url") {
      throw d.unknownSubdirective(["url"], "unrecognized challtestsrv option '%s'");
    }
    if (out.url !== undefined) throw d.err("url already set");
    if (!d.nextArg()) throw d.argErr();
    out.url = d.val();
    if (d.nextArg()) throw d.argErr();
  }
  return out;
}
