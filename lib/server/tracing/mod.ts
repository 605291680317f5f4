/**
 * Registers the `tracing` handler (`http.handlers.tracing`, OpenTelemetry spans); its code and
 * the OpenTelemetry packages load when a config first uses it.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("http.handlers.tracing"); // defined
 * ```
 *
 * @module
 */
import { getModule, lazyModule, registerModule } from "../module/mod.ts";

const tracing = lazyModule(
  "http.handlers.tracing",
  async () => (await import("./handler.ts")).tracingModule,
);
if (!getModule(tracing.id)) registerModule(tracing);
