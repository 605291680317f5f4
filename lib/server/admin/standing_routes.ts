/**
 * Admin routes that exist whatever the running config holds, as Caddy's `admin.api.*` modules
 * do: `GET /reverse_proxy/upstreams` answers `[]` when no proxy is configured, `GET /metrics` serves
 * the process's Prometheus metrics. Each route's code
 * loads on its first request. Routes a config's modules register come first.
 *
 * @module
 */
import type { AdminRoute } from "../module/mod.ts";

/** A route of the admin API that does not depend on the config. */
export interface StandingRoute {
  /** Module id, e.g. `admin.api.reverse_proxy`. */
  id: string;
  /** Path (or prefix ending in `/`) it answers. */
  pattern: string;
  /** Loads the route's handler. */
  load(): Promise<AdminRoute>;
}

/** Every standing route. */
export const STANDING_ROUTES: readonly StandingRoute[] = [
  {
    id: "admin.api.reverse_proxy",
    pattern: "/reverse_proxy/upstreams",
    load: async () =>
      (await import("../http/handlers/reverse_proxy/upstreams.ts")).upstreamsAdminRoute,
  },
  {
    id: "admin.api.metrics",
    pattern: "/metrics",
    load: async () => (await import("../metrics/handler.ts")).metricsAdminRoute,
  },
];

/**
 * True when `path` is under `pattern` (equal, or below it).
 *
 * @example
 * ```ts
 * import { routeMatches } from "./standing_routes.ts";
 * routeMatches("/pki/ca/", "/pki/ca/local"); // true
 * ```
 */
export function routeMatches(pattern: string, path: string): boolean {
  return path === pattern ||
    (pattern.endsWith("/") ? path.startsWith(pattern) : path.startsWith(pattern + "/"));
}
