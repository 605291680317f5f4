/**
 * `query` matcher: `{"key": ["value", "*"]}`; matches when any listed key has its first value
 * equal to a listed value (`*` = any value). `{}` matches requests without a query.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import type { RequestMatcher } from "../handler.ts";
import { compileTemplate, type Template } from "../replacer.ts";

/**
 * `http.matchers.query` (Caddy's `MatchQuery`, `modules/caddyhttp/matchers.go`): query keys to
 * the values one of them may have (`*`: any value); keys and values may hold placeholders. A
 * key matches when its first value in the request is one of its list. `{}` matches requests
 * without a query; a query with `;` never matches (Go refuses to parse it).
 */
export type QueryMatcherConfig = Record<string, string[]>;

/**
 * Decodes a `query` matcher: an object of string arrays.
 *
 * @example
 * ```ts
 * import { decodeQueryMatcher } from "./query.ts";
 * decodeQueryMatcher({ page: ["1", "*"] }).page; // ["1", "*"]
 * ```
 */
export function decodeQueryMatcher(raw: unknown): QueryMatcherConfig {
  const d = Decoder.of(raw, "http.matchers.query");
  for (const [k, v] of Object.entries(d.raw)) {
    if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
      d.failAt(k, "must be a string array");
    }
  }
  return d.raw as QueryMatcherConfig;
}

/** Builds a query matcher from its decoded config. */
export function queryMatcher(config: QueryMatcherConfig): RequestMatcher {
  const params: [Template, Template[]][] = Object.entries(config).map((
    [k, v],
  ) => [compileTemplate(k), v.map((s) => compileTemplate(s))]);
  return {
    match(c) {
      if (c.query.includes(";")) return false; // Go's ParseQuery rejects semicolons
      const parsed = new URLSearchParams(c.query);
      for (const [k, vals] of params) {
        const first = parsed.get(k.render(c));
        if (first === null) continue;
        for (const v of vals) {
          const want = v.render(c);
          if (want === "*" || want === first) return true;
        }
      }
      return params.length === 0 && c.query === "";
    },
  };
}

/** Registry entry. */
export const queryMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.query",
  create: (config) => queryMatcher(decodeQueryMatcher(config)),
};
