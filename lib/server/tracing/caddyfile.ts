/**
 * Gatehousefile syntax of the `tracing` handler (`http.handlers.tracing`, `handler.ts`):
 * `tracing [<matcher>] { span <name>; span_attributes { <key> <value> ... } }`.
 *
 * @module
 */
import type { Dispenser } from "../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../caddyfile/registry.ts";

/** `http.handlers.tracing`, as Caddy's `Tracing` (`modules/caddyhttp/tracing/module.go`). */
export type TracingConfig = {
  /** The module name. */
  handler: "tracing";
  /** The span's name (placeholders allowed); `handler` when empty. */
  span?: string;
  /** Attributes added to each span (values may hold placeholders). */
  span_attributes?: Record<string, string>;
};

/** `tracing`. */
export function parseTracing(d: Dispenser): TracingConfig {
  d.next();
  if (d.nextArg()) throw d.argErr();
  const out: TracingConfig = { handler: "tracing", span: "" };
  for (const n = d.nesting(); d.nextBlock(n);) {
    if (d.val() === "span_attributes") {
      const attrs = (out.span_attributes ??= {});
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

/** The Gatehousefile syntax of `tracing`. */
export const syntax: SyntaxSet = { handlerDirectives: { tracing: parseTracing } };
