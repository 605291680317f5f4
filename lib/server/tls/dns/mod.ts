/**
 * The table of the DNS provider modules shipped with Gatehouse (namespace `dns.providers`):
 * `challtestsrv` (pebble-challtestsrv's management API) and `mock` (in memory: config checks
 * and tests only), with their Gatehousefile syntax. Their code loads when a config first names
 * them; `tls/mod.ts` registers the table.
 *
 * @example
 * ```ts
 * import "../mod.ts";
 * import { getModule } from "../../module/mod.ts";
 * getModule("dns.providers.mock"); // defined
 * ```
 *
 * @module
 */
import type { SyntaxEntry } from "../../caddyfile/registry.ts";

const syntax = async () => (await import("./caddyfile.ts")).syntax;

/** Every DNS provider. */
export const DNS_PROVIDERS: readonly SyntaxEntry[] = [
  {
    id: "dns.providers.mock",
    load: async () => (await import("./mock.ts")).mockDnsProviderModule as never,
    syntax,
  },
  {
    id: "dns.providers.challtestsrv",
    load: async () => (await import("./challtestsrv.ts")).challtestsrvDnsProviderModule as never,
    syntax,
  },
];

export type { DnsProvider, DnsRecord } from "./provider.ts";
