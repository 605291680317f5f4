/**
 * Go's spellings of scalar values, shared by the duration parser and the Gatehousefile's value
 * readers: `%q` quoting and `strconv.ParseFloat`, with Go's error messages (a Caddy user's
 * tooling matches them).
 *
 * @module
 */
import { ConfigError } from "./error.ts";

/**
 * Go's `%q` of a plain string.
 *
 * @example
 * ```ts
 * import { goQuote } from "./go_values.ts";
 * goQuote("a b"); // "\"a b\""
 * ```
 */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/**
 * Go's `strconv.ParseFloat(s, 64)`; throws a `ConfigError` with Go's message.
 *
 * @example
 * ```ts
 * import { goParseFloat } from "./go_values.ts";
 * goParseFloat("1.5"); // 1.5
 * ```
 */
export function goParseFloat(s: string): number {
  const t = s.replace(/_/g, "");
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) && !s.startsWith("_")) return Number(t);
  if (/^[+-]?(inf|infinity)$/i.test(s)) return s.startsWith("-") ? -Infinity : Infinity;
  if (/^nan$/i.test(s)) return NaN;
  throw new ConfigError(
    "invalid_config",
    `strconv.ParseFloat: parsing ${goQuote(s)}: invalid syntax`,
  );
}
