/**
 * Named regexp matchers: a Go regular expression (`config/regexp.ts`) whose matches set
 * `{http.regexp.<name>.<index|group>}` placeholders.
 *
 * @module
 */
import type { RequestContext } from "./context.ts";
import { goRegExp } from "../config/regexp.ts";

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
