/**
 * Gatehousefile syntax of the DNS providers shipped here (used wherever a provider is named:
 * the global `dns` and `acme_dns` options, `tls { dns ... }`):
 *
 * ```
 * dns mock [<argument>]
 * dns challtestsrv [<management url>]
 * dns challtestsrv {
 *     url <management url>
 * }
 * ```
 *
 * @module
 */
import type { Dispenser } from "../../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../../caddyfile/registry.ts";

/** `mock [<argument>]`. */
export function mockDNSProvider(d: Dispenser): Record<string, unknown> {
  d.next();
  const out: Record<string, unknown> = {};
  if (d.nextArg()) out.argument = d.val();
  if (d.nextArg()) throw d.err(`unexpected argument '${d.val()}'`);
  return out;
}

/**
 * `challtestsrv [<url>]` or a block with `url`.
 *
 * @example
 * ```ts ignore
 * unmarshalModule(d, "dns.providers.challtestsrv"); // { url: "http://127.0.0.1:8055" }
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

/** The Gatehousefile syntax of the DNS providers. */
export const syntax: SyntaxSet = {
  modules: {
    "dns.providers.mock": mockDNSProvider,
    "dns.providers.challtestsrv": challtestsrvSyntax,
  },
};
