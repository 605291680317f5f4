/**
 * `metrics` handler → `metrics [{ disable_openmetrics }]`.
 *
 * @module
 */
import type { HandlerReverser } from "../caddyfile/writer/context.ts";
import { line } from "../caddyfile/writer/tokens.ts";
import type { MetricsHandlerConfig } from "./caddyfile.ts";

/** `metrics [{ disable_openmetrics }]`. */
export const writer: HandlerReverser<MetricsHandlerConfig> = (f) => {
  const block = f.bool("disable_openmetrics") ? [line(["disable_openmetrics"])] : undefined;
  return { name: "metrics", args: [], block };
};
