/**
 * The table of the listener wrappers (`caddy.listeners.*`, a server's `listener_wrappers`):
 * `proxy_protocol`, `http_redirect` and the `tls` marker, each entry naming the wrapper's id,
 * its definition and its Gatehousefile syntax (`wrappers/caddyfile.ts`), each loaded when
 * used. Importing this file registers the table (each id once).
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
import { registerTable } from "../module/mod.ts";
import type { SyntaxEntry } from "../caddyfile/registry.ts";

const syntax = async () => (await import("./wrappers/caddyfile.ts")).syntax;

/** Every listener wrapper. */
export const LISTENER_WRAPPERS: readonly SyntaxEntry[] = [
  {
    id: "caddy.listeners.proxy_protocol",
    load: async () => (await import("./wrappers/proxy_protocol.ts")).proxyProtocolModule,
    syntax,
  },
  {
    id: "caddy.listeners.http_redirect",
    load: async () => (await import("./wrappers/http_redirect.ts")).httpRedirectModule,
    syntax,
  },
  {
    id: "caddy.listeners.tls",
    load: async () => (await import("./wrappers/mod.ts")).tlsMarkerModule,
    syntax,
  },
];

registerTable(LISTENER_WRAPPERS);
