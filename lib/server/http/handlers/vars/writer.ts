/**
 * `vars` handler → `root`, `fs`, `log_skip`, `log_name` (the directives that set one
 * variable) or `vars` (any others).
 *
 * @module
 */
import type { HandlerReverser } from "../../../caddyfile/writer/context.ts";
import { kindOf } from "../../../caddyfile/writer/problems.ts";
import { bare, type Line, line, stringWord, word } from "../../../caddyfile/writer/tokens.ts";
import type { Token } from "../../../caddyfile/lexer.ts";
import type { VarsConfig } from "./config.ts";

/** A token the adapter reads back (through `ScalarVal`) as exactly `v`. */
function scalar(v: unknown): Token | string {
  // unquoted words that look like numbers or booleans would become those
  if (typeof v === "string") return stringWord(v);
  if (typeof v === "boolean") return bare(String(v));
  if (typeof v === "number" && Number.isFinite(v)) return bare(String(v));
  throw new Error(kindOf(v));
}

/** `vars`. */
export const writer: HandlerReverser<VarsConfig> = (f) => {
  const keys = f.rest();
  if (keys.length === 1) {
    const [k] = keys;
    const v = f.value[k];
    if (k === "root" && typeof v === "string") {
      f.take(k);
      // "*" keeps a path-like root from being read as a matcher (older adapters do)
      return { name: "root", args: [word(v)], starFirst: true };
    }
    if (k === "fs" && typeof v === "string") {
      f.take(k);
      return { name: "fs", args: [word(v)] };
    }
    if (k === "log_skip" && v === true && f.take(k)) return { name: "log_skip", args: [] };
    if (
      k === "access_logger_names" && Array.isArray(v) && v.length > 0 &&
      v.every((s) => typeof s === "string")
    ) {
      f.take(k);
      return { name: "log_name", args: v.map((s) => word(s)) };
    }
  }
  const block: Line[] = [];
  for (const k of keys) {
    const v = f.take(k);
    let tok: Token | string;
    try {
      tok = scalar(v);
    } catch {
      f.problems.add(f.at(k), `a variable set to ${kindOf(v)} has no Gatehousefile form`);
      return null;
    }
    block.push(line([k, tok]));
  }
  if (block.length === 0) return { name: "vars", args: [] };
  if (block.length === 1) return { name: "vars", args: block[0].words };
  return { name: "vars", args: [], block };
};
