/**
 * Caddy's `humanize` (go-humanize's `Bytes` and `Time`): `size` turns a byte count into
 * `2.0 MB`, `time[:<layout>]` a time (RFC 1123 with a numeric zone by default) into
 * `3 days ago` or `2 weeks from now`.
 *
 * @module
 */
import { FuncError } from "./gotemplate/mod.ts";
import { parseTime } from "./time.ts";

const SIZES = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];

/** go-humanize's `Bytes` (SI units). */
export function humanBytes(n: bigint): string {
  if (n < 10n) return `${n} B`;
  const s = Number(n);
  const e = Math.floor(Math.log(s) / Math.log(1000));
  const val = Math.floor((s / 1000 ** e) * 10 + 0.5) / 10;
  return val < 10 ? `${val.toFixed(1)} ${SIZES[e]}` : `${val.toFixed(0)} ${SIZES[e]}`;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
const MONTH = 30 * DAY;
const YEAR = 12 * MONTH;
const LONG = 37 * YEAR;

const MAGNITUDES: [number, string, number][] = [
  [SECOND, "now", SECOND],
  [2 * SECOND, "1 second %s", 1],
  [MINUTE, "%d seconds %s", SECOND],
  [2 * MINUTE, "1 minute %s", 1],
  [HOUR, "%d minutes %s", MINUTE],
  [2 * HOUR, "1 hour %s", 1],
  [DAY, "%d hours %s", HOUR],
  [2 * DAY, "1 day %s", 1],
  [WEEK, "%d days %s", DAY],
  [2 * WEEK, "1 week %s", 1],
  [MONTH, "%d weeks %s", WEEK],
  [2 * MONTH, "1 month %s", 1],
  [YEAR, "%d months %s", MONTH],
  [18 * MONTH, "1 year %s", 1],
  [2 * YEAR, "2 years %s", 1],
  [LONG, "%d years %s", YEAR],
  [Infinity, "a long while %s", 1],
];

/** go-humanize's `Time`: how long ago (or from now) a time is. */
export function humanTime(then: Date, now = new Date()): string {
  let label = "ago";
  let diff = now.getTime() - then.getTime();
  if (diff < 0) {
    label = "from now";
    diff = -diff;
  }
  const m = MAGNITUDES.find(([d]) => d > diff) ?? MAGNITUDES[MAGNITUDES.length - 1];
  return m[1].replace("%d", String(Math.floor(diff / m[2]))).replace("%s", label);
}

/** `humanize <format> <input>`. */
export function humanize(formatType: string, data: string): string {
  const parts = formatType.split(":");
  switch (parts[0]) {
    case "size": {
      if (!/^\d+$/.test(data) || BigInt(data) >= 1n << 64n) {
        throw new FuncError(
          `humanize: size cannot be parsed: strconv.ParseUint: parsing ${JSON.stringify(data)}: ${
            /^\d+$/.test(data) ? "value out of range" : "invalid syntax"
          }`,
        );
      }
      return humanBytes(BigInt(data));
    }
    case "time": {
      // as Caddy: only what stands between the first and a second colon is the layout
      const layout = parts.length > 1 ? parts[1] : "Mon, 02 Jan 2006 15:04:05 -0700";
      let t: Date;
      try {
        t = parseTime(layout, data);
      } catch (e) {
        throw new FuncError(`humanize: time cannot be parsed: ${(e as Error).message}`);
      }
      return humanTime(t);
    }
  }
  throw new FuncError("no know function was given");
}
