/**
 * Caddy durations: an integer is nanoseconds; a string is a Go duration (`300ms`, `1.5h`,
 * `2h45m`) that also accepts `d` for days.
 *
 * @module
 */

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * Parses a Caddy duration into milliseconds; throws on malformed input.
 *
 * @example
 * ```ts
 * import { parseDuration } from "./duration.ts";
 * parseDuration("1m30s"); // 90000
 * parseDuration(1_000_000); // 1 (nanoseconds in, ms out)
 * ```
 */
export function parseDuration(raw: unknown): number {
  if (typeof raw === "number") return raw / 1e6;
  if (typeof raw !== "string" || raw === "") {
    throw new Error(`invalid duration: ${JSON.stringify(raw)}`);
  }
  if (/^-?\d+$/.test(raw)) return Number(raw) / 1e6;
  let rest = raw;
  let sign = 1;
  if (rest.startsWith("-")) {
    sign = -1;
    rest = rest.slice(1);
  }
  let total = 0;
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d)/;
  while (rest.length) {
    const m = re.exec(rest);
    if (!m) throw new Error(`invalid duration: ${raw}`);
    total += Number(m[1]) * UNITS[m[2]];
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}
