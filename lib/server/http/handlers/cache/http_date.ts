/**
 * HTTP-date (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms a
 * recipient must accept, always UTC. Anything else is no date (an `Expires` that is no date
 * means "already expired", RFC 9111 §5.3).
 *
 * @module
 */

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

function utc(y: number, mon: string, d: number, time: string): number {
  const m = MONTHS.indexOf(mon.toLowerCase());
  const t = /^(\d{2}):(\d{2}):(\d{2})$/.exec(time);
  if (m < 0 || !t) return NaN;
  const [h, mi, s] = [Number(t[1]), Number(t[2]), Number(t[3])];
  if (d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return NaN;
  return Date.UTC(y, m, d, h, mi, s);
}

/**
 * The time of an HTTP-date in ms since the epoch; NaN when the text is no HTTP-date.
 *
 * @example
 * ```ts
 * import { parseHttpDate } from "./http_date.ts";
 * parseHttpDate("Sun, 06 Nov 1994 08:49:37 GMT"); // 784111777000
 * parseHttpDate("Sunday, 06-Nov-94 08:49:37 GMT"); // 784111777000
 * parseHttpDate("Sun Nov  6 08:49:37 1994"); // 784111777000
 * parseHttpDate("0"); // NaN
 * ```
 */
export function parseHttpDate(text: string | null | undefined): number {
  if (!text) return NaN;
  const s = text.trim();
  let m = /^[A-Za-z]{3}, (\d{2}) ([A-Za-z]{3}) (\d{4}) (\d{2}:\d{2}:\d{2}) GMT$/.exec(s);
  if (m) return utc(Number(m[3]), m[2], Number(m[1]), m[4]);
  m = /^[A-Za-z]+, (\d{2})-([A-Za-z]{3})-(\d{2}) (\d{2}:\d{2}:\d{2}) GMT$/.exec(s);
  if (m) {
    // a two-digit year more than 50 years ahead is in the past (RFC 9110 §5.6.7)
    let y = 2000 + Number(m[3]);
    if (y > new Date().getUTCFullYear() + 50) y -= 100;
    return utc(y, m[2], Number(m[1]), m[4]);
  }
  m = /^[A-Za-z]{3} ([A-Za-z]{3}) ([ \d]\d) (\d{2}:\d{2}:\d{2}) (\d{4})$/.exec(s);
  if (m) return utc(Number(m[4]), m[1], Number(m[2].trim()), m[3]);
  return NaN;
}

/**
 * A time as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
 *
 * @example
 * ```ts
 * import { httpDate } from "./http_date.ts";
 * httpDate(784111777000); // "Sun, 06 Nov 1994 08:49:37 GMT"
 * ```
 */
export function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
