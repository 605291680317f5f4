/**
 * `vars` matcher (`{"name": ["value"]}`, a `{placeholder}` key reads that placeholder; a
 * missing variable or placeholder reads as "") and `vars_regexp` matcher
 * (`{"name": {name, pattern}}`).
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestContext } from "../context.ts";
import { Decoder } from "../../config/decode.ts";
import type { RequestMatcher } from "../handler.ts";
import { NamedRegexp } from "../regexp.ts";
import { compileTemplate, getterFor, type Template } from "../replacer.ts";
import { decodeRegexp, type RegexpConfig } from "./path_regexp.ts";

/**
 * `http.matchers.vars` (Caddy's `VarsMatcher`, `modules/caddyhttp/vars.go`): variable names
 * to the values one of them may have; a `{placeholder}` name reads that placeholder instead
 * of a variable, and values may hold placeholders. A missing variable reads as "". `{}`
 * matches every request.
 */
export type VarsMatcherConfig = Record<string, string[]>;

/**
 * `http.matchers.vars_regexp` (Caddy's `MatchVarsRE`, `modules/caddyhttp/vars.go`): variable
 * (or `{placeholder}`) names to the expression their value must match; one match is enough.
 */
export type VarsRegexpMatcherConfig = Record<string, RegexpConfig>;

/**
 * Decodes a `vars` matcher: an object of arrays (values other than strings are read as their
 * text).
 *
 * @example
 * ```ts
 * import { decodeVarsMatcher } from "./vars.ts";
 * decodeVarsMatcher({ "{http.request.host}": ["a.example"] });
 * ```
 */
export function decodeVarsMatcher(raw: unknown): VarsMatcherConfig {
  const d = Decoder.of(raw, "http.matchers.vars");
  return Object.fromEntries(
    Object.entries(d.raw).map(([k, v]) => {
      if (!Array.isArray(v)) return d.failAt(k, "must be an array");
      return [k, v.map((s) => String(s))];
    }),
  );
}

/**
 * Decodes a `vars_regexp` matcher: an object of `{name, pattern}`.
 *
 * @example
 * ```ts
 * import { decodeVarsRegexpMatcher } from "./vars.ts";
 * decodeVarsRegexpMatcher({ user: { name: "u", pattern: "^admin" } }).user.name; // "u"
 * ```
 */
export function decodeVarsRegexpMatcher(raw: unknown): VarsRegexpMatcherConfig {
  const d = Decoder.of(raw, "http.matchers.vars_regexp");
  return Object.fromEntries(Object.entries(d.raw).map(([k, v]) => [k, decodeRegexp(v, d.at(k))]));
}

/**
 * A variable's value as a string (Go's `%v`); a missing one is "" (current Caddy, since 2.8:
 * 2.6.2 compared `<nil>`, so a `not` of an empty match held for a missing placeholder and
 * `forward_auth` set a copied header the auth reply lacked to "").
 */
export function varString(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function reader(key: string): (c: RequestContext) => string {
  if (key.startsWith("{") && key.endsWith("}") && key.split("{").length === 2) {
    const g = getterFor(key.slice(1, -1));
    return (c) => g(c) ?? "";
  }
  return (c) => varString(c.getVar(key));
}

/** Builds a vars matcher from its decoded config. */
export function varsMatcher(config: VarsMatcherConfig): RequestMatcher {
  const entries: [(c: RequestContext) => string, Template[]][] = Object.entries(config).map((
    [k, v],
  ) => [reader(k), v.map((s) => compileTemplate(s))]);
  return {
    match(c) {
      if (entries.length === 0) return true;
      for (const [read, vals] of entries) {
        const actual = read(c);
        for (const v of vals) if (v.render(c) === actual) return true;
      }
      return false;
    },
  };
}

/** Builds a vars_regexp matcher from its decoded config. */
export function varsRegexpMatcher(config: VarsRegexpMatcherConfig): RequestMatcher {
  const entries = Object.entries(config).map(([k, v]) =>
    [k, reader(k), new NamedRegexp(v)] as const
  );
  return {
    match(c) {
      for (const [, read, re] of entries) {
        if (re.match(read(c), c)) return true;
      }
      return false;
    },
  };
}

/** Registry entry for `vars`. */
export const varsMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.vars",
  create: (config) => varsMatcher(decodeVarsMatcher(config)),
};

/** Registry entry for `vars_regexp`. */
export const varsRegexpMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.vars_regexp",
  create: (config) => varsRegexpMatcher(decodeVarsRegexpMatcher(config)),
};
