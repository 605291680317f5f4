/**
 * Registers the metrics: the http app's route instrumentation (made when a config has a
 * `metrics` object), the `metrics` handler (`http.handlers.metrics`) and the admin API's
 * `GET /metrics` (`admin.api.metrics`). The metrics code itself loads only when a config or
 * a scrape needs it.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("admin.api.metrics"); // defined
 * ```
 *
 * @module
 */
import type { ModuleInstance } from "../module/instance.ts";
import { getModule, lazyModule, type ModuleDefinition, registerModule } from "../module/mod.ts";
import { registerHttpInstrumentation } from "../http/instrumentation.ts";

registerHttpInstrumentation(async (app, servers, ctx) =>
  (await import("./config.ts")).provisionMetrics(app, servers, ctx)
);

const metricsAdminModule: ModuleDefinition<ModuleInstance> = {
  id: "admin.api.metrics",
  create(_config, ctx) {
    ctx.registerAdminRoute({
      pattern: "/metrics",
      handle: async (request) => (await import("./handler.ts")).metricsAdminRoute.handle(request),
    });
    return {};
  },
};

for (
  const m of [
    lazyModule(
      "http.handlers.metrics",
      async () => (await import("./handler.ts")).metricsHandlerModule,
    ),
    metricsAdminModule,
  ]
) {
  if (!getModule(m.id)) registerModule(m);
}
