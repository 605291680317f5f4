/**
 * The request matchers in the JSON → Gatehousefile direction: each matcher's config as the
 * lines of a named matcher (`@name <matcher> ...` or a line of its block). A writer reads its
 * matcher's JSON as that matcher's config type (`Of<FileMatcherConfig>`), so that the fields
 * it reads are the module's own, and every matcher of {@linkcode MatcherConfigs} has one. The
 * writer kit
 * (`caddyfile/writer/matchers.ts`) chooses the names and writes the definitions; the
 * matchers' table names these writers.
 *
 * @module
 */
import { bare, type Line, line, word } from "../../caddyfile/writer/tokens.ts";
import { childPath, isObject, kindOf } from "../../caddyfile/writer/problems.ts";
import { siteText } from "../../caddyfile/writer/placeholders.ts";
import {
  canonicalHeader,
  MatcherError,
  type MatcherWriter,
  type MatcherWriterCtx,
} from "../../caddyfile/writer/matchers.ts";
import { makeToken, type Token } from "../../caddyfile/lexer.ts";
import type { ExpressionMatcherConfig } from "./expression.ts";
import type { FileMatcherConfig } from "./file.ts";
import type { HeaderMatcherConfig } from "./header.ts";
import type { HeaderRegexpMatcherConfig } from "./header_regexp.ts";
import type { HostMatcherConfig } from "./host.ts";
import type { MethodMatcherConfig } from "./method.ts";
import type { NotMatcherConfig } from "./not.ts";
import type { PathMatcherConfig } from "./path.ts";
import type { PathRegexpMatcherConfig, RegexpConfig } from "./path_regexp.ts";
import type { ProtocolMatcherConfig } from "./protocol.ts";
import type { QueryMatcherConfig } from "./query.ts";
import type { ClientIPMatcherConfig, RemoteIPMatcherConfig } from "./remote_ip.ts";
import type { URLPatternMatcherConfig } from "./url_pattern.ts";
import type { VarsMatcherConfig, VarsRegexpMatcherConfig } from "./vars.ts";

/** The config type of each matcher, by matcher name. */
export interface MatcherConfigs {
  host: HostMatcherConfig;
  path: PathMatcherConfig;
  method: MethodMatcherConfig;
  protocol: ProtocolMatcherConfig;
  header: HeaderMatcherConfig;
  query: QueryMatcherConfig;
  vars: VarsMatcherConfig;
  remote_ip: RemoteIPMatcherConfig;
  client_ip: ClientIPMatcherConfig;
  vars_regexp: VarsRegexpMatcherConfig;
  header_regexp: HeaderRegexpMatcherConfig;
  path_regexp: PathRegexpMatcherConfig;
  expression: ExpressionMatcherConfig;
  file: FileMatcherConfig;
  url_pattern: URLPatternMatcherConfig;
  not: NotMatcherConfig;
}

/** A JSON object read as config `T`: its fields by `T`'s names (values as given). */
type Of<T> = { readonly [K in keyof T]?: unknown };

function strings(v: unknown, path: string, what: string): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) {
    throw new MatcherError(path, `${what} must be an array of strings, got ${kindOf(v)}`);
  }
  return v as string[];
}

function object<T>(v: unknown, path: string, what: string): Of<T> {
  if (!isObject(v)) throw new MatcherError(path, `${what} must be an object, got ${kindOf(v)}`);
  return v as Of<T>;
}

/** The path of field `key` of `o` when it has one, else the path of `o` (a missing field). */
function fieldPath<T>(path: string, o: Of<T>, key: keyof T & string): string {
  return Object.hasOwn(o, key) ? childPath(path, key) : path;
}

function regexpName(r: Of<RegexpConfig>, path: string): string[] {
  const name = r.name;
  const extra = Object.keys(r).filter((k) => k !== "name" && k !== "pattern");
  if (extra.length) throw new MatcherError(childPath(path, extra[0]), `unknown regexp field`);
  if (typeof r.pattern !== "string") {
    throw new MatcherError(fieldPath(path, r, "pattern"), "pattern must be a string");
  }
  if (name === undefined) {
    throw new MatcherError(
      path,
      "a regexp matcher without a name: the Gatehousefile names it after its matcher",
    );
  }
  if (typeof name !== "string") throw new MatcherError(childPath(path, "name"), "must be a string");
  // written even when it is the matcher's name: older adapters do not default to it
  return [name];
}

/** Words whose raw forms (quotes kept) joined by spaces are `expr`, at least two. */
function rawExpressionWords(expr: string): Token[] | undefined {
  const parts = expr.split(" ");
  if (parts.length < 2 || parts.some((x) => x === "")) return undefined;
  const out: Token[] = [];
  for (const part of parts) {
    let tok: Token | undefined;
    try {
      const t = word(part);
      if (t.quote === "" && t.text === siteText(part)) tok = t;
    } catch { /* tried below */ }
    if (!tok && /^"[^"\\]*"$/.test(part)) tok = makeToken({ text: part.slice(1, -1), quote: '"' });
    if (!tok && /^`[^`]*`$/.test(part)) tok = makeToken({ text: part.slice(1, -1), quote: "`" });
    if (!tok) return undefined;
    out.push(tok);
  }
  return out;
}

function ipRanges(name: string, v: unknown, p: string): Line[] {
  const o = object<ClientIPMatcherConfig>(v, p, name);
  const keys = Object.keys(o).filter((k) => k !== "ranges");
  if (keys.length) throw new MatcherError(childPath(p, keys[0]), `field of ${name} has no form`);
  const ranges = strings(o.ranges ?? [], childPath(p, "ranges"), "ranges");
  if (ranges.length === 0) throw new MatcherError(p, `${name} without ranges has no form`);
  return [line([name, ...ranges])];
}

function keyedRegexps(name: string, v: unknown, p: string): Line[] {
  const o = object<HeaderRegexpMatcherConfig>(v, p, name);
  return Object.entries(o).map(([field, r]) => {
    const rp = childPath(p, field);
    const re = object<RegexpConfig>(r, rp, name);
    return line([name, ...regexpName(re, rp), field, re.pattern as string]);
  });
}

function expression(v: unknown, p: string, ctx: MatcherWriterCtx): Line[] {
  // a plain string: written as several words, which the adapter keeps raw and leaves unnamed
  if (typeof v === "string") {
    if (ctx.name === "") return [line(["expression", v])];
    const words = rawExpressionWords(v);
    if (!words) {
      throw new MatcherError(
        p,
        "an unnamed expression of one word has no form in a named matcher (one word takes the matcher's name)",
      );
    }
    return [{ words: [bare("expression"), ...words] }];
  }
  const r = object<Exclude<ExpressionMatcherConfig, string>>(v, p, "expression");
  if (typeof r.expr !== "string") {
    throw new MatcherError(fieldPath(p, r, "expr"), "expr must be a string");
  }
  if (r.name !== ctx.name) {
    throw new MatcherError(fieldPath(p, r, "name"), "the expression is named after its matcher");
  }
  return [line(["expression", r.expr])];
}

function file(v: unknown, p: string): Line[] {
  const r = object<FileMatcherConfig>(v, p, "file");
  const block: Line[] = [];
  for (const [k, val] of Object.entries(r)) {
    switch (k as keyof FileMatcherConfig) {
      case "root":
      case "try_policy":
        if (typeof val !== "string") throw new MatcherError(childPath(p, k), "must be a string");
        block.push(line([k, val]));
        break;
      case "try_files":
      case "split_path":
        block.push(line([k, ...strings(val, childPath(p, k), k)]));
        break;
      default:
        throw new MatcherError(childPath(p, k), `field ${k} of the file matcher has no form`);
    }
  }
  return [block.length ? line(["file"], block) : line(["file"])];
}

function urlPattern(v: unknown, p: string): Line[] {
  const r = object<URLPatternMatcherConfig>(v, p, "url_pattern");
  if (typeof r.pattern !== "string") {
    throw new MatcherError(fieldPath(p, r, "pattern"), "pattern must be a string");
  }
  const b: Line[] = [];
  for (const k of Object.keys(r)) {
    if (k === "base_url" && typeof r.base_url === "string") {
      b.push(line(["base_url", r.base_url]));
    } else if (k === "ignore_case" && r.ignore_case === true) b.push(line(["ignore_case"]));
    else if (k !== "pattern") {
      throw new MatcherError(childPath(p, k), "this url_pattern option has no form");
    }
  }
  return [line(["url_pattern", r.pattern], b.length ? b : undefined)];
}

function header(v: unknown, p: string): Line[] {
  const o = object<HeaderMatcherConfig>(v, p, "header");
  const out: Line[] = [];
  for (const [field, vals] of Object.entries(o)) {
    if (canonicalHeader(field) !== field) {
      throw new MatcherError(
        childPath(p, field),
        `header field ${field} is not in canonical form (${
          canonicalHeader(field)
        }), which the Gatehousefile always writes`,
      );
    }
    if (vals === null) out.push(line(["header", "!" + field]));
    else {
      const list = strings(vals, childPath(p, field), "header values");
      if (list.length === 0) {
        throw new MatcherError(childPath(p, field), "an empty list of header values");
      }
      for (const val of list) out.push(line(["header", field, val]));
    }
  }
  return out;
}

function query(v: unknown, p: string): Line[] {
  const o = object<QueryMatcherConfig>(v, p, "query");
  const args: string[] = [];
  for (const [k, vals] of Object.entries(o)) {
    const list = strings(vals, childPath(p, k), "query values");
    if (list.length === 0 || k.includes("=")) {
      throw new MatcherError(childPath(p, k), "has no key=value form");
    }
    for (const val of list) args.push(`${k}=${val}`);
  }
  if (args.length === 0) throw new MatcherError(p, "an empty query matcher has no form");
  return [line(["query", ...args])];
}

function vars(v: unknown, p: string): Line[] {
  const o = object<VarsMatcherConfig>(v, p, "vars");
  return Object.entries(o).map(([k, vals]) => {
    const list = strings(vals, childPath(p, k), "vars values");
    if (list.length === 0) throw new MatcherError(childPath(p, k), "an empty list of values");
    return line(["vars", k, ...list]);
  });
}

function not(v: unknown, p: string, ctx: MatcherWriterCtx): Line[] {
  if (!Array.isArray(v) || v.length === 0) {
    throw new MatcherError(p, "not must be a non-empty array of matcher sets");
  }
  return v.map((set, i) => {
    const lines = ctx.setLines(set, childPath(p, i));
    if (lines.length === 1 && !lines[0].block) {
      return { words: [bare("not"), ...lines[0].words] };
    }
    return line(["not"], lines);
  });
}

/** The writer of every matcher, by name. */
export const WRITERS: { readonly [K in keyof MatcherConfigs]: MatcherWriter } = {
  path: (v, p) => [line(["path", ...strings(v, p, "path")])],
  host: (v, p) => [line(["host", ...strings(v, p, "host")])],
  method: (v, p) => [line(["method", ...strings(v, p, "method")])],
  protocol: (v, p) => {
    if (typeof v !== "string") throw new MatcherError(p, "protocol must be a string");
    return [line(["protocol", v])];
  },
  header,
  query,
  vars,
  remote_ip: (v, p) => ipRanges("remote_ip", v, p),
  client_ip: (v, p) => ipRanges("client_ip", v, p),
  vars_regexp: (v, p) => keyedRegexps("vars_regexp", v, p),
  header_regexp: (v, p) => keyedRegexps("header_regexp", v, p),
  path_regexp: (v, p) => {
    const r = object<PathRegexpMatcherConfig>(v, p, "path_regexp");
    return [line(["path_regexp", ...regexpName(r, p), r.pattern as string])];
  },
  expression,
  file,
  url_pattern: urlPattern,
  not,
};
