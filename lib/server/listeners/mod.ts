/**
 * Registers the listener wrapper modules (`caddy.listeners.*`): `proxy_protocol`,
 * `http_redirect` and the `tls` marker. Their code loads when a config names them.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("caddy.listeners.proxy_protocol"); // defined
 * ```
 *
 * @module
 */
import { getModule, lazyModule, type ModuleDefinition, registerModule } from "../module/mod.ts";

const wrappers: ModuleDefinition[] = [
  lazyModule(
    "caddy.listeners.proxy_protocol",
    async () =>
      (await import("./wrappers/proxy_protocol.ts")).proxyProtocolModule as ModuleDefinition,
  ),
  lazyModule(
    "caddy.listeners.http_redirect",
    async () =>
      (await import("./wrappers/http_redirect.ts")).httpRedirectModule as ModuleDefinition,
  ),
  lazyModule(
    "caddy.listeners.tls",
    async () => (await import("./wrappers/mod.ts")).tlsMarkerModule as ModuleDefinition,
  ),
];

for (const m of wrappers) if (!getModule(m.id)) registerModule(m);
