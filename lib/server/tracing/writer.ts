/**
 * `tracing` handler → `tracing { span <name> }`.
 *
 * @module
 */
import type { HandlerReverser } from "../caddyfile/writer/context.ts";
import { line } from "../caddyfile/writer/tokens.ts";
import type { TracingConfig } from "./caddyfile.ts";

/** `tracing { span <name> }`. */
export const writer: HandlerReverser<TracingConfig> = (f) => {
  const span = f.str("span");
  return {
    name: "tracing",
    args: [],
    block: span !== undefined ? [line(["span", span])] : undefined,
  };
};
