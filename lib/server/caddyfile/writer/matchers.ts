/**
 * Request matchers in the JSON → Gatehousefile direction: a route's matcher set becomes the
 * matcher token of its directive — nothing for no matcher, `/path` for a single path, or a
 * named matcher `@name` defined once per site block (`@name <matcher> ...` on one line, or a
 * `@name { ... }` block). Matchers whose JSON carries the matcher's name (`expression`, and
 * the regexp matchers by default) fix the name the definition must use.
 *
 * @module
 */
import { bare, type Line, line, word } from "./tokens.ts";
import { childPath, isObject, kindOf, type Problems } from "./problems.ts";
import { siteText, WordError } from "./placeholders.ts";
import { makeToken, type Token } from "../lexer.ts";

/** Lines of one matcher module inside a matcher set (each line starts with the module name). */
type MatcherFn = (value: unknown, path: string, ctx: MatcherCtx) => Line[];

interface MatcherCtx {
  /** The named matcher's name (without `@`), which regexp and expression matchers default to. */
  name: string;
  problems: Problems;
}

class MatcherError extends Error {
  path: string;
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

function strings(v: unknown, path: string, what: string): string[] {
  if (!Array.isArray(v) || !v.every((s) => typeof s === "string")) {
    throw new MatcherError(path, `${what} must be an array of strings, got ${kindOf(v)}`);
  }
  return v as string[];
}

function object(v: unknown, path: string, what: string): Record<string, unknown> {
  if (!isObject(v)) throw new MatcherError(path, `${what} must be an object, got ${kindOf(v)}`);
  return v;
}

/** The path of field `key` of `o` when it has one, else the path of `o` (a missing field). */
function fieldPath(path: string, o: Record<string, unknown>, key: string): string {
  return Object.hasOwn(o, key) ? childPath(path, key) : path;
}

/** Go's `textproto.CanonicalMIMEHeaderKey`. */
export function canonicalHeader(s: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(s)) return s;
  return s.toLowerCase().replace(/(^|-)([a-z])/g, (_m, p, c) => p + c.toUpperCase());
}

function regexpName(r: Record<string, unknown>, path: string, _ctx: MatcherCtx): string[] {
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

const MATCHERS: Record<string, MatcherFn> = {
  path: (v, p) => [line(["path", ...strings(v, p, "path")])],
  host: (v, p) => [line(["host", ...strings(v, p, "host")])],
  method: (v, p) => [line(["method", ...strings(v, p, "method")])],
  protocol: (v, p) => {
    if (typeof v !== "string") throw new MatcherError(p, "protocol must be a string");
    return [line(["protocol", v])];
  },
  header: (v, p) => {
    const o = object(v, p, "header");
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
  },
  query: (v, p) => {
    const o = object(v, p, "query");
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
  },
  vars: (v, p) => {
    const o = object(v, p, "vars");
    return Object.entries(o).map(([k, vals]) => {
      const list = strings(vals, childPath(p, k), "vars values");
      if (list.length === 0) throw new MatcherError(childPath(p, k), "an empty list of values");
      return line(["vars", k, ...list]);
    });
  },
  remote_ip: (v, p) => ipRanges("remote_ip", v, p),
  client_ip: (v, p) => ipRanges("client_ip", v, p),
  vars_regexp: (v, p, ctx) => keyedRegexps("vars_regexp", v, p, ctx),
  header_regexp: (v, p, ctx) => keyedRegexps("header_regexp", v, p, ctx),
  path_regexp: (v, p, ctx) => {
    const r = object(v, p, "path_regexp");
    return [line(["path_regexp", ...regexpName(r, p, ctx), r.pattern as string])];
  },
  expression: (v, p, ctx) => {
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
    const r = object(v, p, "expression");
    if (typeof r.expr !== "string") {
      throw new MatcherError(fieldPath(p, r, "expr"), "expr must be a string");
    }
    if (r.name !== ctx.name) {
      throw new MatcherError(
        fieldPath(p, r, "name"),
        "the expression is named after its matcher",
      );
    }
    return [line(["expression", r.expr])];
  },
  file: (v, p) => {
    const r = object(v, p, "file");
    const block: Line[] = [];
    for (const [k, val] of Object.entries(r)) {
      switch (k) {
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
  },
  url_pattern: (v, p) => {
    const r = object(v, p, "url_pattern");
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
  },
  not: (v, p, ctx) => {
    if (!Array.isArray(v) || v.length === 0) {
      throw new MatcherError(p, "not must be a non-empty array of matcher sets");
    }
    return v.map((set, i) => {
      const lines = setLines(set, childPath(p, i), ctx);
      if (lines.length === 1 && !lines[0].block) {
        return { words: [bare("not"), ...lines[0].words] };
      }
      return line(["not"], lines);
    });
  },
};

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
  const o = object(v, p, name);
  const keys = Object.keys(o).filter((k) => k !== "ranges");
  if (keys.length) throw new MatcherError(childPath(p, keys[0]), `field of ${name} has no form`);
  const ranges = strings(o.ranges ?? [], childPath(p, "ranges"), "ranges");
  if (ranges.length === 0) throw new MatcherError(p, `${name} without ranges has no form`);
  return [line([name, ...ranges])];
}

function keyedRegexps(name: string, v: unknown, p: string, ctx: MatcherCtx): Line[] {
  const o = object(v, p, name);
  return Object.entries(o).map(([field, r]) => {
    const rp = childPath(p, field);
    const re = object(r, rp, name);
    return line([name, ...regexpName(re, rp, ctx), field, re.pattern as string]);
  });
}

/** Lines for every matcher of a set (inside `@name { }` or `not { }`). */
function setLines(set: unknown, path: string, ctx: MatcherCtx): Line[] {
  const o = object(set, path, "a matcher set");
  const out: Line[] = [];
  for (const [mod, val] of Object.entries(o)) {
    const fn = MATCHERS[mod];
    const mp = childPath(path, mod);
    if (!fn) throw new MatcherError(mp, `matcher ${mod} has no Gatehousefile syntax`);
    try {
      out.push(...fn(val, mp, ctx));
    } catch (e) {
      if (e instanceof WordError) throw new MatcherError(mp, e.message);
      throw e;
    }
  }
  if (out.length === 0) throw new MatcherError(path, "an empty matcher set has no form");
  return out;
}

/** The names a set's expression matchers require (the matcher's own name). */
function requiredNames(set: unknown, out: Set<string>): void {
  if (!isObject(set)) return;
  for (const [mod, val] of Object.entries(set)) {
    if (mod === "expression" && isObject(val) && typeof val.name === "string") out.add(val.name);
    if (mod === "not" && Array.isArray(val)) { for (const s of val) requiredNames(s, out); }
  }
}

/** The names the regexp matchers of a set would like (to write no explicit name). */
function preferredNames(set: unknown, out: string[]): void {
  if (!isObject(set)) return;
  for (const [mod, val] of Object.entries(set)) {
    if (mod === "path_regexp" && isObject(val) && typeof val.name === "string") out.push(val.name);
    if ((mod === "header_regexp" || mod === "vars_regexp") && isObject(val)) {
      for (const r of Object.values(val)) {
        if (isObject(r) && typeof r.name === "string") out.push(r.name);
      }
    }
    if (mod === "not" && Array.isArray(val)) { for (const s of val) preferredNames(s, out); }
  }
}

const NAME_RE = /^[A-Za-z0-9_\-.]+$/;

/**
 * The named matchers of one scope (a site block or named route): the definitions, written at
 * the top of the scope, and the token each matcher set is written as.
 */
export class MatcherScope {
  /** Definitions, in the order first used. */
  readonly definitions: Line[] = [];
  private readonly byJson = new Map<string, string>();
  private readonly used = new Set<string>();
  private next = 0;
  private readonly problems: Problems;

  /** A scope reporting into `problems`. */
  constructor(problems: Problems) {
    this.problems = problems;
  }

  /**
   * The matcher token for a route's `match` (undefined: no matcher). Throws
   * {@linkcode WordError}-like errors as problems; returns null when the matcher has no form.
   */
  token(match: unknown, path: string): string | undefined | null {
    if (match === undefined) return undefined;
    if (!Array.isArray(match)) {
      this.problems.add(path, `match must be an array of matcher sets, got ${kindOf(match)}`);
      return null;
    }
    if (match.length === 0) return undefined;
    if (match.length > 1) {
      this.problems.add(
        path,
        "a route with more than one matcher set (any may match) has no Gatehousefile form; a directive takes one matcher",
      );
      return null;
    }
    const set = match[0];
    const sp = childPath(path, 0);
    if (isObject(set)) {
      const keys = Object.keys(set);
      const p = set.path;
      if (
        keys.length === 1 && Array.isArray(p) && p.length === 1 && typeof p[0] === "string" &&
        p[0].startsWith("/") && !/\s/.test(p[0])
      ) {
        return p[0];
      }
    }
    return this.named(set, sp);
  }

  /** A named matcher for the set at `path` (defined on first use); null on problems. */
  named(set: unknown, path: string): string | null {
    const key = JSON.stringify(set);
    const known = this.byJson.get(key);
    if (known) return known;
    const required = new Set<string>();
    requiredNames(set, required);
    if (required.size > 1) {
      this.problems.add(path, "expression matchers of one set carry different names");
      return null;
    }
    let name: string | undefined = [...required][0];
    if (name !== undefined && (!NAME_RE.test(name) || this.used.has(name))) {
      this.problems.add(
        path,
        `the expression matcher is named ${
          JSON.stringify(name)
        }, which cannot be a matcher name here`,
      );
      return null;
    }
    if (name === undefined) {
      const preferred: string[] = [];
      preferredNames(set, preferred);
      name = preferred.find((n) => NAME_RE.test(n) && !this.used.has(n));
    }
    while (name === undefined || this.used.has(name)) name = `m${this.next++}`;
    const chosen: string = name;
    let lines: Line[];
    try {
      lines = setLines(set, path, { name: chosen, problems: this.problems });
    } catch (e) {
      if (e instanceof MatcherError) {
        this.problems.add(e.path, e.message);
        return null;
      }
      throw e;
    }
    this.used.add(chosen);
    const token = "@" + chosen;
    this.byJson.set(key, token);
    // one line when the set is one matcher line, else a block
    this.definitions.push(
      lines.length === 1 && !lines[0].block && lines[0].words[0].text !== "expression"
        ? { words: [bare(token), ...lines[0].words] }
        : { words: [bare(token)], block: lines },
    );
    return token;
  }
}

/**
 * Lines of a matcher set nested in another directive (`lb_retry_match`, `not`), which has no
 * name of its own; null after reporting a problem.
 */
export function nestedSetLines(set: unknown, path: string, problems: Problems): Line[] | null {
  try {
    return setLines(set, path, { name: "", problems });
  } catch (e) {
    if (e instanceof MatcherError) {
      problems.add(e.path, e.message);
      return null;
    }
    throw e;
  }
}
