/**
 * Go (RE2) regular expressions as Caddy configs write them, translated to JS `RegExp`:
 * `(?P<name>...)` becomes `(?<name>...)`, leading inline flags `(?i)`, `(?s)`, `(?m)` become
 * RegExp flags. Matches set `{http.regexp.<name>.<index|group>}` placeholders.
 *
 * @module
 */
import type { RequestContext } from "./context.ts";
import { ConfigError } from "../config/error.ts";

/**
 * Compiles a Go regular expression.
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

/** A named regexp matcher (`{"name": "...", "pattern": "..."}`, decoded). */
export class NamedRegexp {
  /** Placeholder prefix, `http.regexp` or `http.regexp.<name>`. */
  readonly prefix: string;
  /** The compiled expression. */
  readonly re: RegExp;

  /** Compiles a decoded `{name, pattern}`. */
  constructor(config: { name?: string; pattern: string }) {
    this.prefix = config.name ? `http.regexp.${config.name}` : "http.regexp";
    this.re = goRegExp(config.pattern);
  }

  /** Tests input; on a match stores the captures as placeholders. */
  match(input: string, c: RequestContext): boolean {
    const m = this.re.exec(input);
    if (!m) return false;
    for (let i = 0; i < m.length; i++) c.setPlaceholder(`${this.prefix}.${i}`, m[i] ?? "");
    if (m.groups) {
      for (const [k, v] of Object.entries(m.groups)) {
        c.setPlaceholder(`${this.prefix}.${k}`, v ?? "");
      }
    }
    return true;
  }
}
