/**
 * Durations: JSON holds nanoseconds (a number) or a duration string; the Gatehousefile
 * writes the largest unit that divides the value evenly (`90s`, `1500ms`).
 *
 * @module
 */

const UNITS: [string, number][] = [
  ["h", 3_600_000_000_000],
  ["m", 60_000_000_000],
  ["s", 1_000_000_000],
  ["ms", 1_000_000],
  ["us", 1_000],
  ["ns", 1],
];

/** The duration text for a JSON duration, or undefined when it is not one. */
export function durationText(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v !== "number" || !Number.isInteger(v)) return undefined;
  if (v === 0) return "0s";
  if (v < 0) return "-" + durationText(-v);
  for (const [u, n] of UNITS) if (v % n === 0) return `${v / n}${u}`;
  return `${v}ns`;
}
