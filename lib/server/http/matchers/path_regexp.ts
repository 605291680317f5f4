/**
 * `path_regexp` matcher: `{name, pattern}` tested against the cleaned decoded path; captures
 * become `{http.regexp.<name>.N}` placeholders. Its config, Caddy's `MatchRegexp`, is also
 * each field's of `header_regexp` and `vars_regexp`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import type { RequestMatcher } from "../handler.ts";
import { cleanPath } from "../pathutil.ts";
import { goRegExp } from "../../config/regexp.ts";
import { NamedRegexp } from "../regexp.ts";

/**
 * A regular expression with a name (Caddy's `MatchRegexp`, `modules/caddyhttp/matchers.go`):
 * a match sets `{http.regexp.<name>.<group>}` for each group, by index and by name.
 */
export type RegexpConfig = {
  /** The name in the placeholders (none: `{http.regexp.<group>}`, which others may overwrite). */
  name?: string;
  /** The expression, in Go's (RE2) syntax: `(?P<name>...)` groups, leading `(?i)` flags. */
  pattern: string;
};

/** `http.matchers.path_regexp` (Caddy's `MatchPathRE`): tested on the cleaned, decoded path. */
export type PathRegexpMatcherConfig = RegexpConfig;

/**
 * Decodes a `{name, pattern}` at `path` (the pattern must compile).
 *
 * @example
 * ```ts
 * import { decodeRegexp } from "./path_regexp.ts";
 * decodeRegexp({ name: "id", pattern: "^/(\\d+)$" }, "http.matchers.path_regexp").name; // "id"
 * ```
 */
export function decodeRegexp(raw: unknown, path: string): RegexpConfig {
  // an array passes as an object without fields (its pattern is missing)
  const d = Array.isArray(raw) ? new Decoder({}, path) : Decoder.of(raw, path);
  const pattern = d.string("pattern");
  if (pattern === undefined) throw d.error(`"pattern" must be a string`);
  if (d.value("name") === null) d.fail(`"name" must be a string`);
  const name = d.string("name");
  goRegExp(pattern);
  return name === undefined ? { pattern } : { name, pattern };
}

/**
 * Decodes a `path_regexp` matcher.
 *
 * @example
 * ```ts
 * import { decodePathRegexpMatcher } from "./path_regexp.ts";
 * decodePathRegexpMatcher({ pattern: "\\.php$" }).pattern; // "\\.php$"
 * ```
 */
export function decodePathRegexpMatcher(raw: unknown): PathRegexpMatcherConfig {
  return decodeRegexp(raw, "http.matchers.path_regexp");
}

/** Builds a path_regexp matcher from its decoded config. */
export function pathRegexpMatcher(config: PathRegexpMatcherConfig): RequestMatcher {
  const re = new NamedRegexp(config);
  return { match: (c) => re.match(cleanPath(c.path, true), c) };
}

/** Registry entry. */
export const pathRegexpMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.path_regexp",
  create: (config) => pathRegexpMatcher(decodePathRegexpMatcher(config)),
};
