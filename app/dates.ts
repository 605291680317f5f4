/**
 * Dates in words for the app's pages: "3 minutes ago", "in 7 days", and the full date
 * "12 March 2026 at 14:05 UTC" (pages show UTC: the server does not know the reader's time
 * zone). Pages put the full form in a `<time>` element's `title` and the ISO form in its
 * `datetime`, so both readers and machines get an exact value.
 *
 * @module
 */

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

const two = (n: number) => String(n).padStart(2, "0");

/**
 * The full date, e.g. `12 March 2026 at 14:05 UTC`.
 *
 * @example
 * ```ts
 * import { fullDate } from "./dates.ts";
 * fullDate(Date.UTC(2026, 2, 12, 14, 5)); // "12 March 2026 at 14:05 UTC"
 * ```
 */
export function fullDate(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} at ` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())} UTC`;
}

const UNITS: [number, string][] = [
  [365 * 86_400_000, "year"],
  [30 * 86_400_000, "month"],
  [7 * 86_400_000, "week"],
  [86_400_000, "day"],
  [3_600_000, "hour"],
  [60_000, "minute"],
];

/**
 * How far `ms` is from `now`, in words: `just now`, `5 minutes ago`, `in 7 days`.
 *
 * @example
 * ```ts
 * import { relativeDate } from "./dates.ts";
 * relativeDate(Date.now() - 3 * 60_000); // "3 minutes ago"
 * ```
 */
export function relativeDate(ms: number, now: number = Date.now()): string {
  const diff = ms - now;
  const abs = Math.abs(diff);
  if (abs < 60_000) return "just now";
  for (const [size, unit] of UNITS) {
    // Rounded, and a unit counts from 95 % of it: a week less a few seconds is "1 week".
    if (abs >= size * 0.95) {
      const n = Math.max(1, Math.round(abs / size));
      const words = `${n} ${unit}${n === 1 ? "" : "s"}`;
      return diff < 0 ? `${words} ago` : `in ${words}`;
    }
  }
  return "just now";
}

/** ISO form for a `<time datetime>` attribute. */
export function isoDate(ms: number): string {
  return new Date(ms).toISOString();
}
