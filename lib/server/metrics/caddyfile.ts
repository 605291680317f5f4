/**
 * Gatehousefile syntax of the `metrics` handler (`http.handlers.metrics`, `handler.ts`):
 * `metrics [<matcher>] { disable_openmetrics }`.
 *
 * @module
 */
import type { Dispenser } from "../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../caddyfile/registry.ts";

/** `http.handlers.metrics`, as Caddy's `Metrics` (`modules/metrics/metrics.go`). */
export type MetricsHandlerConfig = {
  /** The module name. */
  handler: "metrics";
  /**
   * Answer in the Prometheus text format even to scrapers that ask for OpenMetrics (for
   * scrapers that cannot parse what is negotiated).
   */
  disable_openmetrics?: boolean;
};

/** `metrics`. */
export function parseMetrics(d: Dispenser): MetricsHandlerConfig {
  d.next();
  if (d.remainingArgs().length > 0) throw d.argErr();
  const out: MetricsHandlerConfig = { handler: "metrics" };
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "disable_openmetrics") {
      throw d.unknownSubdirective(["disable_openmetrics"], 'unrecognized subdirective "%s"');
    }
    out.disable_openmetrics = true;
  }
  return out;
}

/** The Gatehousefile syntax of `metrics`. */
export const syntax: SyntaxSet = { handlerDirectives: { metrics: parseMetrics } };
