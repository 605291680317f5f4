/**
 * `map` handler → `map <source> <destinations...> { <input> <outputs...>; default <outputs...> }`.
 *
 * @module
 */
import type { Token } from "../../../caddyfile/lexer.ts";
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { childPath, Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { bare, type Line, line, stringWord, word } from "../../../caddyfile/writer/tokens.ts";
import type { MapConfig, MappingConfig } from "./config.ts";

/** `map`. */
export const writer: HandlerReverser<MapConfig> = (f) => {
  const source = f.str("source") ?? "";
  const dests = f.strs("destinations") ?? [];
  const block: Line[] = [];
  for (const [i, m] of (f.arr("mappings") ?? []).entries()) {
    const mp = childPath(f.at("mappings"), i);
    if (!isObject(m)) continue;
    const mf = new Fields<MappingConfig>(m, mp, f.problems);
    const input = mf.str("input"), re = mf.str("input_regexp");
    const outs: Token[] = [];
    for (const [k, o] of (mf.arr("outputs") ?? []).entries()) {
      // typed as the adapter reads them back: "-" is null, bare numbers and booleans
      if (o === null) outs.push(bare("-"));
      else if (typeof o === "number" || typeof o === "boolean") outs.push(bare(String(o)));
      else if (typeof o === "string" && o !== "-") outs.push(stringWord(o));
      else {
        f.problems.add(
          childPath(mf.at("outputs"), k),
          'a map output is a string (not "-"), a number, a boolean or null',
        );
        return null;
      }
    }
    mf.done("a map entry");
    if (re !== undefined) block.push(line(["~" + re, ...outs]));
    else if (input !== undefined) block.push(line([input, ...outs]));
  }
  const defaults = f.strs("defaults");
  if (defaults) block.push(line(["default", ...defaults]));
  return { name: "map", args: [word(source), ...dests.map((d) => word(d))], block };
};
