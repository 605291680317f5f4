/**
 * The config of `http.handlers.map`, field by field as Caddy's `Handler` and `Mapping`
 * (`modules/caddyhttp/map/map.go`), and its decoder. The JSON decoder, the `map` directive
 * (`caddyfile.ts`) and the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { goRegExp } from "../../../config/regexp.ts";

/** One mapping from an input to outputs. */
export type MappingConfig = {
  /** The input value to match exactly (distinct from the other mappings'). */
  input?: string;
  /**
   * A regular expression the input matches instead (Go syntax; `$1`, `${1}`, `$name` in the
   * outputs are its groups, and the outputs' placeholders are not replaced, as in Caddy).
   */
  input_regexp?: string;
  /**
   * The outputs, one per destination in order (written as text; placeholders allowed in an
   * exact row's). A null or missing output leaves its destination to the later rows, then to
   * its default.
   */
  outputs?: unknown[];
};

/** `http.handlers.map`. */
export type MapConfig = {
  /** The module name. */
  handler: "map";
  /** The placeholder whose value is the input. */
  source?: string;
  /** The placeholders the outputs are stored in (written in braces, `{my_placeholder}`). */
  destinations?: string[];
  /** The mappings; the first whose input matches applies. */
  mappings?: MappingConfig[];
  /**
   * Each destination's value when no row gives it one, in order (placeholders allowed; null:
   * unset; none: "").
   */
  defaults?: (string | null)[];
};

/** The fields of {@linkcode MapConfig}. */
export const MAP_FIELDS: readonly (keyof MapConfig)[] = [
  "handler",
  "source",
  "destinations",
  "mappings",
  "defaults",
];

const MAPPING_FIELDS: readonly (keyof MappingConfig)[] = ["input", "input_regexp", "outputs"];

/**
 * Decodes and checks a `map` config (types, known fields, the regular expressions, no more
 * outputs than destinations).
 *
 * @example
 * ```ts
 * import { decodeMap } from "./config.ts";
 * decodeMap({ handler: "map", source: "{host}", destinations: ["{site}"] }).source; // "{host}"
 * ```
 */
export function decodeMap(raw: Raw): MapConfig {
  const d = new Decoder(raw, "http.handlers.map").fields(MAP_FIELDS);
  const out: MapConfig = { handler: "map" };
  const source = d.string("source");
  if (source !== undefined) out.source = source;
  const destinations = d.value("destinations") as string[] | undefined;
  if (destinations !== undefined) out.destinations = destinations;
  const mappings = d.array("mappings")?.map((m, i) => {
    const o = Decoder.of(m, `${d.at("mappings")}[${i}]`).fields(MAPPING_FIELDS);
    const mapping: MappingConfig = {};
    const outputs = o.value("outputs") as unknown[] | undefined;
    if ((outputs ?? []).length > (destinations ?? []).length) {
      d.fail("more outputs than destinations");
    }
    if (typeof o.raw.input === "string") mapping.input = o.raw.input;
    if (typeof o.raw.input_regexp === "string") {
      goRegExp(o.raw.input_regexp);
      mapping.input_regexp = o.raw.input_regexp;
    }
    if (outputs !== undefined) mapping.outputs = outputs;
    return mapping;
  });
  if (mappings) out.mappings = mappings;
  const defaults = d.value("defaults") as (string | null)[] | undefined;
  if (defaults !== undefined) out.defaults = defaults;
  return out;
}
