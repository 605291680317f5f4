/**
 * The table of the trusted-proxy sources (`http.ip_sources.*`, a server's `trusted_proxies`):
 * each entry names the source's id, its definition and its Gatehousefile syntax, each loaded
 * when used.
 *
 * @module
 */
import type { SyntaxEntry } from "../caddyfile/registry.ts";

/** Every trusted-proxy source. */
export const IP_SOURCES: readonly SyntaxEntry[] = [
  {
    id: "http.ip_sources.static",
    load: async () => (await import("./ip_source_static.ts")).staticIPSourceModule,
    syntax: async () => (await import("./ip_source_static_caddyfile.ts")).syntax,
  },
];
