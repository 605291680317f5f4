/**
 * `admin.api.reverse_proxy`: the admin endpoint `GET /reverse_proxy/upstreams`, part of every
 * config as Caddy's (it answers `[]` when no proxy is configured). The upstream table's code
 * loads on the first request.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { ModuleInstance } from "../../../module/instance.ts";

/** Registry entry. */
export const reverseProxyAdminModule: ModuleDefinition<ModuleInstance> = {
  id: "admin.api.reverse_proxy",
  create(_config, ctx) {
    ctx.registerAdminRoute({
      pattern: "/reverse_proxy/upstreams",
      handle: async (request) =>
        (await import("./upstreams.ts")).upstreamsAdminRoute.handle(request),
    });
    return {};
  },
};
