/**
 * Gatehousefile syntax of the `map` handler:
 * `map [<matcher>] <source> <destinations...> { [~]<input> <outputs...>; default <defaults...> }`
 * (`~` makes the input a regexp; `-` leaves an output unset).
 *
 * @module
 */
import type { Helper } from "../../../caddyfile/helper.ts";
import { wasReplacedShorthand } from "../../../caddyfile/shorthands.ts";
import type { SyntaxSet } from "../../../caddyfile/registry.ts";
import type { MapConfig, MappingConfig } from "./config.ts";

/** `map`. */
export function parseMap(h: Helper): MapConfig {
  h.next();
  if (!h.nextArg()) throw h.argErr();
  const out: MapConfig = { handler: "map" };
  if (h.val() !== "") out.source = h.val();
  const destinations = h.remainingArgs();
  if (destinations.length === 0) throw h.err("missing destination argument(s)");
  for (const dest of destinations) {
    const short = wasReplacedShorthand(dest);
    if (short) throw h.err(`destination ${short} conflicts with a Caddyfile placeholder shorthand`);
  }
  out.destinations = destinations;
  const mappings: MappingConfig[] = [];
  let defaults: string[] | undefined;
  for (const n = h.nesting(); h.nextBlock(n);) {
    if (h.val() === "default") {
      if (defaults?.length) throw h.err("defaults already defined");
      defaults = h.remainingArgs();
      while (defaults.length < destinations.length) defaults.push("");
      continue;
    }
    const input = h.val();
    const outs: unknown[] = [];
    while (h.nextArg()) {
      const v = h.scalarVal();
      outs.push(v === "-" ? null : v);
    }
    if (outs.length > destinations.length) throw h.err("too many outputs");
    while (outs.length < destinations.length) outs.push(null);
    const m: MappingConfig = {};
    if (input.startsWith("~")) {
      if (input.length > 1) m.input_regexp = input.slice(1);
    } else if (input !== "") m.input = input;
    m.outputs = outs;
    mappings.push(m);
  }
  if (mappings.length > 0) out.mappings = mappings;
  if (defaults?.length) out.defaults = defaults;
  return out;
}

/** The Gatehousefile syntax of `map`. */
export const syntax: SyntaxSet = { handlerDirectives: { map: parseMap } };
