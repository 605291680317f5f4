/**
 * Request matchers in the JSON → Gatehousefile direction: a route's matcher set becomes the
 * matcher token of its directive — nothing for no matcher, `/path` for a single path, or a
 * named matcher `@name` defined once per site block (`@name <matcher> ...` on one line, or a
 * `@name { ... }` block). Matchers whose JSON carries the matcher's name (`expression`, and
 * the regexp matchers by default) fix the name the definition must use. Each matcher
 * module's lines come from its writer (beside the module, named by the matchers' table and
 * registered here by the assembler).
 *
 * @module
 */
import { bare, type Line } from "./tokens.ts";
import { childPath, isObject, kindOf, type Problems } from "./problems.ts";
import { WordError } from "./placeholders.ts";

/** What a matcher writer is given besides its config. */
export interface MatcherWriterCtx {
  /** The named matcher's name (without `@`), which regexp and expression matchers default to. */
  readonly name: string;
  /** Where problems go. */
  readonly problems: Problems;
  /** The lines of a matcher set nested in this one (`not`), under the same name. */
  setLines(set: unknown, path: string): Line[];
}

/**
 * Writes one matcher module's config (at JSON path `path`, the JSON as given, unchecked) as
 * lines of a matcher set, each starting with the module's name; throws a
 * {@linkcode MatcherError} when the config has no Gatehousefile form.
 */
export type MatcherWriter = (value: unknown, path: string, ctx: MatcherWriterCtx) => Line[];

/** A matcher config without a Gatehousefile form, at a JSON path. */
export class MatcherError extends Error {
  /** The JSON path of the part without a form. */
  path: string;
  /** An error at `path`. */
  constructor(path: string, message: string) {
    super(message);
    this.path = path;
  }
}

/** Go's `textproto.CanonicalMIMEHeaderKey`. */
export function canonicalHeader(s: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(s)) return s;
  return s.toLowerCase().replace(/(^|-)([a-z])/g, (_m, p, c) => p + c.toUpperCase());
}

const writers = new Map<string, MatcherWriter>();

/**
 * Registers the writers of matcher modules, by matcher name (`path`, `not`...): the
 * assembler registers those the matchers' table names before it writes anything.
 *
 * @example
 * ```ts ignore
 * registerMatcherWriters({ method: (v, p) => [line(["method", ...(v as string[])])] });
 * ```
 */
export function registerMatcherWriters(table: Readonly<Record<string, MatcherWriter>>): void {
  for (const [name, fn] of Object.entries(table)) {
    if (writers.has(name)) throw new Error(`writer of matcher ${name} already registered`);
    writers.set(name, fn);
  }
}

/** Lines for every matcher of a set (inside `@name { }` or `not { }`). */
function setLines(set: unknown, path: string, ctx: MatcherWriterCtx): Line[] {
  if (!isObject(set)) {
    throw new MatcherError(path, `a matcher set must be an object, got ${kindOf(set)}`);
  }
  const out: Line[] = [];
  for (const [mod, val] of Object.entries(set)) {
    const fn = writers.get(mod);
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

/** The context of the writers of one named (or unnamed: "") matcher set. */
function writerCtx(name: string, problems: Problems): MatcherWriterCtx {
  const ctx: MatcherWriterCtx = {
    name,
    problems,
    setLines: (set, path) => setLines(set, path, ctx),
  };
  return ctx;
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
      lines = setLines(set, path, writerCtx(chosen, this.problems));
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
    return setLines(set, path, writerCtx("", problems));
  } catch (e) {
    if (e instanceof MatcherError) {
      problems.add(e.path, e.message);
      return null;
    }
    throw e;
  }
}
