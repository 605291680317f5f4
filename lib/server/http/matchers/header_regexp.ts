/**
 * `header_regexp` matcher: `{"Field": {name, pattern}}`; every field must have a value that
 * matches; captures become `{http.regexp.<name>.N}`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import type { RequestMatcher } from "../handler.ts";
import { NamedRegexp } from "../regexp.ts";
import { headerValues } from "./header.ts";
import { decodeRegexp, type RegexpConfig } from "./path_regexp.ts";

/**
 * `http.matchers.header_regexp` (Caddy's `MatchHeaderRE`, `modules/caddyhttp/matchers.go`):
 * header fields to the expression one of their values must match; every field listed must
 * match. `Host` reads the request's host.
 */
export type HeaderRegexpMatcherConfig = Record<string, RegexpConfig>;

/**
 * Decodes a `header_regexp` matcher: an object of `{name, pattern}`.
 *
 * @example
 * ```ts
 * import { decodeHeaderRegexpMatcher } from "./header_regexp.ts";
 * decodeHeaderRegexpMatcher({ Cookie: { pattern: "session=" } }).Cookie.pattern; // "session="
 * ```
 */
export function decodeHeaderRegexpMatcher(raw: unknown): HeaderRegexpMatcherConfig {
  const d = Decoder.of(raw, "http.matchers.header_regexp");
  return Object.fromEntries(Object.entries(d.raw).map(([k, v]) => [k, decodeRegexp(v, d.at(k))]));
}

/** Builds a header_regexp matcher from its decoded config. */
export function headerRegexpMatcher(config: HeaderRegexpMatcherConfig): RequestMatcher {
  const fields = Object.entries(config).map(([k, v]) =>
    [k.toLowerCase(), new NamedRegexp(v)] as const
  );
  return {
    match(c) {
      for (const [name, re] of fields) {
        const vals = headerValues(c, name);
        if (!vals || !vals.some((v) => re.match(v, c))) return false;
      }
      return true;
    },
  };
}

/** Registry entry. */
export const headerRegexpMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.header_regexp",
  create: (config) => headerRegexpMatcher(decodeHeaderRegexpMatcher(config)),
};
