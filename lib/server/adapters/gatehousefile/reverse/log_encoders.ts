/**
 * Log encoders in the JSON → Gatehousefile direction: `format console|json` with their
 * shared options (keys, time/duration/level formats, `time_local`), and the wrapping
 * encoders `filter` (per-field filters), `append` (extra fields, typed as the adapter reads
 * them back) and `journald`, each with its `wrap` encoder.
 *
 * @module
 */
import type { Token } from "../../../caddyfile/lexer.ts";
import { childPath, Fields, isObject } from "../../../caddyfile/writer/problems.ts";
import { gline, type Line, rawWord, stringWord } from "../../../caddyfile/writer/tokens.ts";

/** Options every structured encoder shares, written as `<name> <value>`. */
const STRING_OPTIONS = [
  "message_key",
  "level_key",
  "time_key",
  "name_key",
  "caller_key",
  "stacktrace_key",
  "line_ending",
  "time_format",
  "duration_format",
  "level_format",
];

/** Lines of one filtered field (`<field> <filter> ...`); null after a problem. */
function filterLines(name: string, f: Fields): Line[] | null {
  const filter = f.str("filter");
  switch (filter) {
    case "delete":
    case "hash":
      return [gline([name, filter])];
    case "replace":
      return [gline([name, "replace", f.str("value") ?? ""])];
    case "rename":
      return [gline([name, "rename", f.str("name") ?? ""])];
    case "ip_mask": {
      const b: Line[] = [];
      const v4 = f.num("ipv4_cidr");
      if (v4 !== undefined) b.push(gline(["ipv4", String(v4)]));
      const v6 = f.num("ipv6_cidr");
      if (v6 !== undefined) b.push(gline(["ipv6", String(v6)]));
      return [gline([name, "ip_mask"], b)];
    }
    case "regexp":
      return [gline([name, "regexp", f.str("regexp") ?? "", f.str("value") ?? ""])];
    case "multi_regexp": {
      const out: Line[] = [];
      for (const op of f.arr("operations") ?? []) {
        if (!isObject(op) || typeof op.regexp !== "string") {
          f.problems.add(f.at("operations"), "each operation needs a regexp");
          return null;
        }
        out.push(gline([name, "regexp", op.regexp, String(op.value ?? "")]));
      }
      return out;
    }
    case "cookie":
    case "set_cookie":
    case "query": {
      const b: Line[] = [];
      const key = filter === "query" ? "parameter" : "name";
      for (const a of f.arr("actions") ?? []) {
        if (!isObject(a) || typeof a.type !== "string" || typeof a[key] !== "string") {
          f.problems.add(f.at("actions"), `each action needs a type and a ${key}`);
          return null;
        }
        b.push(
          gline([a.type, a[key] as string, ...(typeof a.value === "string" ? [a.value] : [])]),
        );
      }
      return [gline([name, filter], b)];
    }
  }
  f.problems.add(f.path, `log field filter ${filter} has no form here`);
  return null;
}

/** The word of an `append` field value, read back as the same JSON type; null if none. */
function scalarWord(v: unknown): Token | null {
  if (typeof v === "number" && Number.isFinite(v)) return rawWord(String(v));
  if (typeof v === "boolean") return rawWord(String(v));
  if (typeof v !== "string") return null;
  // a string that reads as a number or boolean is quoted, so it stays a string
  return stringWord(v, rawWord);
}

/** The block of `format filter` / `format append`: `wrap` and `fields { ... }`. */
function wrappingBlock(e: Fields, field: (name: string, v: unknown) => Line[] | null): Line[] {
  const b: Line[] = [];
  const wrap = e.fields("wrap");
  if (wrap) {
    const w = encoderLine(wrap, "wrap");
    wrap.done("the wrapped log encoder");
    if (w) b.push(w);
  }
  const fields = e.obj("fields");
  if (fields) {
    const fl: Line[] = [];
    for (const [name, v] of Object.entries(fields)) {
      const lines = field(name, v);
      if (lines) fl.push(...lines);
    }
    b.push(gline(["fields"], fl));
  }
  return b;
}

/**
 * The `format <encoder> ...` line of an encoder (`wrap <encoder> ...` inside a wrapping one);
 * null after a problem.
 */
export function encoderLine(e: Fields, keyword = "format"): Line | null {
  const format = e.str("format");
  switch (format) {
    case "console":
    case "json": {
      const b: Line[] = [];
      for (const k of STRING_OPTIONS) {
        const v = e.str(k);
        if (v !== undefined) b.push(gline([k, v]));
      }
      if (e.bool("time_local")) b.push(gline(["time_local"]));
      return gline([keyword, format], b.length ? b : undefined);
    }
    case "filter":
      return gline(
        [keyword, "filter"],
        wrappingBlock(e, (name, cfg) => {
          const path = childPath(e.at("fields"), name);
          if (!isObject(cfg)) {
            e.problems.add(path, "a field filter must be an object");
            return null;
          }
          const ff = new Fields(cfg, path, e.problems);
          const lines = filterLines(name, ff);
          ff.done(`the ${String(cfg.filter)} log filter`);
          return lines;
        }),
      );
    case "append":
      return gline(
        [keyword, "append"],
        wrappingBlock(e, (name, v) => {
          const w = scalarWord(v);
          if (w) return [gline([name, w])];
          e.problems.add(
            childPath(e.at("fields"), name),
            "an appended log field is a string, a number or a boolean in a Gatehousefile",
          );
          return null;
        }),
      );
    case "journald": {
      const b: Line[] = [];
      const wrap = e.fields("wrap");
      if (wrap) {
        const w = encoderLine(wrap, "wrap");
        wrap.done("the wrapped log encoder");
        if (w) b.push(w);
      }
      return gline([keyword, "journald"], b.length ? b : undefined);
    }
  }
  e.problems.add(
    e.has("format") ? e.at("format") : e.path,
    `log format ${format} has no Gatehousefile form here`,
  );
  return null;
}
