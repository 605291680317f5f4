/**
 * Go (RE2) regular expressions and replacement strings as Caddy configs write them,
 * translated to JS: `(?P<name>...)` becomes `(?<name>...)`, leading inline flags `(?i)`,
 * `(?s)`, `(?m)` become RegExp flags, `${1}` and `${name}` become `$1` and `$<name>`. Used by
 * the http matchers and handlers and by the log filters.
 *
 * @module
 */
import { ConfigError } from "./error.ts";

/**
 * Compiles a Go regular expression; a bad one is a `ConfigError` (`invalid_regexp`).
 *
 * @example
 * ```ts
 * import { goRegExp } from "./regexp.ts";
 * goRegExp("(?i)^/(?P<id>\\d+)$").test("/42"); // true
 * ```
 */
export function goRegExp(pattern: string, extraFlags = ""): RegExp {
  let src = pattern;
  let flags = extraFlags;
  const lead = /^\(\?([imsU]+)\)/.exec(src);
  if (lead) {
    for (const f of lead[1]) if (f !== "U" && !flags.includes(f)) flags += f;
    src = src.slice(lead[0].length);
  }
  src = src.replace(/\(\?P</g, "(?<").replace(/\\z/g, "$").replace(/\\A/g, "^");
  try {
    return new RegExp(src, flags);
  } catch (e) {
    throw new ConfigError(
      "invalid_regexp",
      `invalid regexp ${pattern}: ${(e as Error).message}`,
    );
  }
}

/**
 * Converts Go replacement syntax (`${1}`, `${name}`) to JS (`$1`, `$<name>`).
 *
 * @example
 * ```ts
 * import { goReplacement } from "./regexp.ts";
 * goReplacement("${1}-${id}"); // "$1-$<id>"
 * ```
 */
export function goReplacement(s: string): string {
  return s.replace(/\$\{(\d+)\}/g, "$$$1").replace(/\$\{(\w+)\}/g, "$$<$1>");
}
