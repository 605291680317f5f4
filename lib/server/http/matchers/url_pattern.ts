/**
 * `url_pattern` matcher (Caddy's `http.matchers.url_pattern`): matches the request against a
 * WHATWG URL pattern (the web platform's `URLPattern`), e.g. `/books/:id` or
 * `https://example.com/users/:name`. A pattern with no scheme matches any scheme, host and
 * port; `base_url` resolves a relative one; `ignore_case` matches case-insensitively. The
 * path is cleaned first (slashes merged unless the pattern's path has `//`). Named groups
 * become `{http.url_pattern.<component>.<name>}` (`pathname`, `hostname`, `search`...).
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import type { RequestMatcher } from "../handler.ts";
import { cleanPath } from "../pathutil.ts";

/** `http.matchers.url_pattern`: a WHATWG URL pattern the request's URL must match. */
export type URLPatternMatcherConfig = {
  /** The pattern (`/books/:id`, `https://*.example.com/*`); without a scheme, any origin. */
  pattern?: string;
  /** The URL a relative pattern is resolved against. */
  base_url?: string;
  /** Match case-insensitively. */
  ignore_case?: boolean;
};

/** The fields of {@linkcode URLPatternMatcherConfig}. */
export const URL_PATTERN_FIELDS: readonly (keyof URLPatternMatcherConfig)[] = [
  "pattern",
  "base_url",
  "ignore_case",
];

const COMPONENTS = [
  "protocol",
  "username",
  "password",
  "hostname",
  "port",
  "pathname",
  "search",
  "hash",
] as const;

/** The URLPattern of a config (a pattern without a scheme matches any scheme, host and port). */
function compilePattern(pattern: string, base: string, ignoreCase: boolean): URLPattern {
  const input = base === "" && !pattern.includes("://") ? `*://*:*${pattern}` : pattern;
  return base ? new URLPattern(input, base, { ignoreCase }) : new URLPattern(input, { ignoreCase });
}

/**
 * Decodes a `url_pattern` matcher (known fields, a pattern that compiles).
 *
 * @example
 * ```ts
 * import { decodeURLPatternMatcher } from "./url_pattern.ts";
 * decodeURLPatternMatcher({ pattern: "/books/:id" }).pattern; // "/books/:id"
 * ```
 */
export function decodeURLPatternMatcher(raw: unknown): URLPatternMatcherConfig {
  const d = Decoder.of(raw, "http.matchers.url_pattern").fields(URL_PATTERN_FIELDS);
  const out: URLPatternMatcherConfig = {};
  const pattern = d.string("pattern");
  if (pattern !== undefined) out.pattern = pattern;
  const base = d.string("base_url");
  if (base !== undefined) out.base_url = base;
  const ignoreCase = d.bool("ignore_case");
  if (ignoreCase !== undefined) out.ignore_case = ignoreCase;
  try {
    compilePattern(pattern ?? "", base ?? "", ignoreCase ?? false);
  } catch (e) {
    d.fail(`unable to parse URL pattern ${JSON.stringify(pattern ?? "")}: ${(e as Error).message}`);
  }
  return out;
}

/** Builds a url_pattern matcher from its decoded config. */
export function urlPatternMatcher(config: URLPatternMatcherConfig): RequestMatcher {
  const pattern = config.pattern ?? "";
  const compiled = compilePattern(pattern, config.base_url ?? "", config.ignore_case ?? false);
  let patternPath = pattern;
  const scheme = patternPath.indexOf("://");
  if (scheme >= 0) {
    patternPath = patternPath.slice(scheme + 3);
    const slash = patternPath.indexOf("/");
    patternPath = slash >= 0 ? patternPath.slice(slash) : "";
  }
  const mergeSlashes = !patternPath.includes("//");
  return {
    match(c) {
      const path = cleanPath(c.path, mergeSlashes);
      const target = encodeURI(path).replace(/\?/g, "%3F").replace(/#/g, "%23") +
        (c.query ? `?${c.query}` : "");
      let result: URLPatternResult | null;
      try {
        result = compiled.exec(target, `${c.scheme}://${c.host}`);
      } catch {
        return false;
      }
      if (!result) return false;
      for (const comp of COMPONENTS) {
        for (const [name, value] of Object.entries(result[comp].groups)) {
          if (value !== undefined) c.setPlaceholder(`http.url_pattern.${comp}.${name}`, value);
        }
      }
      return true;
    },
  };
}

/** Registry entry. */
export const urlPatternMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.url_pattern",
  create: (config) => urlPatternMatcher(decodeURLPatternMatcher(config)),
};
