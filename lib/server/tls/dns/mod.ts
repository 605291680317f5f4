/**
 * Registers the DNS provider modules shipped with Gatehouse (namespace `dns.providers`):
 * `challtestsrv` (pebble-challtestsrv's management API) and `mock` (in memory: config checks
 * and tests only). Their code loads when a config first names them.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../../module/mod.ts";
 * getModule("dns.providers.mock"); // defined
 * ```
 *
 * @module
 */
import { getModule, lazyModule, registerModule } from "../../module/mod.ts";

const providers = [
  lazyModule(
    "dns.providers.mock",
    async () => (await import("./mock.ts")).mockDnsProviderModule as never,
  ),
  lazyModule(
    "dns.providers.challtestsrv",
    async () => (await import("./challtestsrv.ts")).challtestsrvDnsProviderModule as never,
  ),
];
for (const m of providers) if (!getModule(m.id)) registerModule(m);

export type { DnsProvider, DnsRecord } from "./provider.ts";
