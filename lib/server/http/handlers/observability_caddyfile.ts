/**
 * Gatehousefile syntax of the `metrics` handler (`metrics [<matcher>] { disable_openmetrics }`)
 * and of `tracing` (`tracing { span <name>; span_attributes { <key> <value> ... } }`).
 *
 * @module
 */
import type { Dispenser } from "../../caddyfile/dispenser.ts";
import type { Handler } from "../../caddyfile/types.ts";

/** `metrics`. */
export function parseMetrics(d: Dispenser): Handler {
  d.next();
  if (d.remainingArgs().length > 0) throw d.argErr();
  const out: Handler = { handler: "metrics" };
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() !== "disable_openmetrics") {
      throw d.unknownSubdirective(["disable_openmetrics"], 'unrecognized subdirective "%s"');
    }
    out.disable_openmetrics = true;
  }
  return out;
}

/** `tracing`. */
export function parseTracing(d: Dispenser): Handler {
  d.next();
  if (d.nextArg()) throw d.argErr();
  const out: Handler = { handler: "tracing", span: "" };
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() === "span_attributes") {
      const attrs = (out.span_attributes ??= {}) as Record<string, string>;
      while (d.nextBlock(1)) {
        const key = d.val();
        if (!d.nextArg()) throw d.argErr();
        const value = d.val();
        if (d.nextArg()) throw d.argErr();
        attrs[key] = value;
      }
    } else if (d.val() === "span") {
      if (!d.nextArg()) throw d.argErr();
      out.span = d.val();
      if (d.nextArg()) throw d.argErr();
    } else throw d.argErr();
  }
  return out;
}
