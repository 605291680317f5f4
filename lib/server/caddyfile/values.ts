/**
 * Scalar values of Gatehousefile arguments, read as Caddy reads them: durations (Go syntax
 * plus `d` for days, written to JSON as nanoseconds), byte sizes (`10MB`, `1GiB`), integers,
 * floats and booleans with Go's rules and Go's error messages.
 *
 * @module
 */
export { goAtoi } from "./import_args.ts";
import { goParseFloat, goQuote } from "../config/go_values.ts";

/** Go's `strconv.Atoi` with its error message. */
export function goAtoiStrict(s: string): number {
  if (/^[+-]?\d+$/.test(s)) {
    const n = Number(s);
    if (Number.isSafeInteger(n)) return n;
    throw new Error(`strconv.Atoi: parsing ${goQuote(s)}: value out of range`);
  }
  throw new Error(`strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`);
}

/** Go's `strconv.ParseBool`. */
export function goParseBool(s: string): boolean {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) return false;
  throw new Error(`strconv.ParseBool: parsing ${goQuote(s)}: invalid syntax`);
}

const SIZES: Record<string, number> = {
  "": 1,
  b: 1,
  kib: 1024,
  kb: 1000,
  ki: 1024,
  k: 1000,
  mib: 1024 ** 2,
  mb: 1000 ** 2,
  mi: 1024 ** 2,
  m: 1000 ** 2,
  gib: 1024 ** 3,
  gb: 1000 ** 3,
  gi: 1024 ** 3,
  g: 1000 ** 3,
  tib: 1024 ** 4,
  tb: 1000 ** 4,
  ti: 1024 ** 4,
  t: 1000 ** 4,
  pib: 1024 ** 5,
  pb: 1000 ** 5,
  pi: 1024 ** 5,
  p: 1000 ** 5,
  eib: 1024 ** 6,
  eb: 1000 ** 6,
  ei: 1024 ** 6,
  e: 1000 ** 6,
};

/**
 * A byte size as go-humanize's `ParseBytes` reads it (`42`, `10MB`, `1.5 GiB`).
 *
 * @example
 * ```ts
 * import { parseSize } from "./values.ts";
 * parseSize("1MiB"); // 1048576
 * ```
 */
export function parseSize(s: string): number {
  let last = 0;
  let comma = false;
  for (const ch of s) {
    if (!(/\d/.test(ch) || ch === "." || ch === ",")) break;
    if (ch === ",") comma = true;
    last++;
  }
  let num = s.slice(0, last);
  if (comma) num = num.replaceAll(",", "");
  const f = goParseFloat(num);
  const extra = s.slice(last).trim().toLowerCase();
  const m = SIZES[extra];
  if (m === undefined) throw new Error(`unhandled size name: ${extra}`);
  return Math.floor(f * m);
}

/**
 * Caddy's `WeakString` in JSON: `true`/`false` as booleans, integers as numbers, anything
 * else (e.g. a placeholder) as a string.
 *
 * @example
 * ```ts
 * import { weakString } from "./values.ts";
 * weakString("404"); // 404
 * weakString("{http.error.status_code}"); // "{http.error.status_code}"
 * ```
 */
export function weakString(s: string): string | number | boolean {
  if (s === "true") return true;
  if (s === "false") return false;
  if (/^[+-]?\d+$/.test(s) && Number.isSafeInteger(Number(s))) return Number(s);
  return s;
}

const TOKEN_CHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/;

/**
 * Go's `textproto.CanonicalMIMEHeaderKey`: `x-request-id` → `X-Request-Id`; a name with a
 * character that is not a token character is returned unchanged.
 *
 * @example
 * ```ts
 * import { canonicalHeaderKey } from "./values.ts";
 * canonicalHeaderKey("content-TYPE"); // "Content-Type"
 * ```
 */
export function canonicalHeaderKey(s: string): string {
  for (const c of s) if (!TOKEN_CHAR.test(c)) return s;
  let upper = true;
  let out = "";
  for (const c of s) {
    out += upper ? c.toUpperCase() : c.toLowerCase();
    upper = c === "-";
  }
  return out;
}
