/**
 * `Cache-Control` (RFC 9111 §5.2): a list of directives, each a token with an optional value
 * that is a token or a quoted string (RFC 9110 §5.6). {@linkcode parseCacheControl} reads any
 * field value without throwing — unknown directives are kept, a directive given twice keeps
 * its first value (RFC 9111 §4.2.1), text that is no directive is skipped up to the next
 * comma — and {@linkcode formatCacheControl} writes directives back so that parsing gives
 * them again. The accessors read the directives the cache acts on; delta-seconds beyond 2^31
 * are 2^31 and an invalid one is 0 (§1.2.2), so an unreadable `max-age` makes a response
 * stale rather than fresh.
 *
 * @module
 */

/** Directives by lower-case name: the value (quotes removed), or `true` without one. */
export type Directives = Map<string, string | true>;

/** RFC 9110 tchar. */
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** The greatest delta-seconds a cache must represent (RFC 9111 §1.2.2). */
export const MAX_DELTA_SECONDS = 2 ** 31;

function isWS(ch: string): boolean {
  return ch === " " || ch === "\t";
}

/**
 * Reads a `Cache-Control` field value (several field lines joined by commas) into its
 * directives; never throws.
 *
 * @example
 * ```ts
 * import { parseCacheControl } from "./cache_control.ts";
 * const d = parseCacheControl('max-age=60, no-cache="Set-Cookie", public');
 * d.get("max-age"); // "60"
 * d.get("no-cache"); // "Set-Cookie"
 * d.get("public"); // true
 * ```
 */
export function parseCacheControl(value: string | null | undefined): Directives {
  const out: Directives = new Map();
  if (!value) return out;
  const s = value;
  let i = 0;
  const n = s.length;
  const skipToComma = () => {
    let quoted = false;
    while (i < n) {
      const ch = s[i];
      if (quoted) {
        if (ch === "\\") i++;
        else if (ch === '"') quoted = false;
      } else if (ch === '"') quoted = true;
      else if (ch === ",") break;
      i++;
    }
  };
  while (i < n) {
    while (i < n && (isWS(s[i]) || s[i] === ",")) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && TCHAR.test(s[i])) i++;
    const name = s.slice(start, i).toLowerCase();
    let j = i;
    while (j < n && isWS(s[j])) j++;
    let val: string | true = true;
    let ok = name !== "";
    if (ok && j < n && s[j] === "=") {
      j++;
      while (j < n && isWS(s[j])) j++;
      if (j < n && s[j] === '"') {
        // quoted-string with quoted-pairs
        let v = "";
        j++;
        let closed = false;
        while (j < n) {
          const ch = s[j];
          if (ch === "\\" && j + 1 < n) {
            v += s[j + 1];
            j += 2;
            continue;
          }
          if (ch === '"') {
            closed = true;
            j++;
            break;
          }
          v += ch;
          j++;
        }
        ok = closed;
        val = v;
      } else {
        const vs = j;
        while (j < n && TCHAR.test(s[j])) j++;
        val = s.slice(vs, j);
      }
      i = j;
      while (i < n && isWS(s[i])) i++;
    } else i = j;
    // anything else before the next comma makes the element no directive
    if (i < n && s[i] !== ",") {
      ok = false;
      skipToComma();
    }
    if (ok && !out.has(name)) out.set(name, val);
  }
  return out;
}

/**
 * Writes directives as a `Cache-Control` value: a value that is a token stays bare, any other
 * is a quoted string (`"` and `\` escaped).
 *
 * @example
 * ```ts
 * import { formatCacheControl } from "./cache_control.ts";
 * formatCacheControl(new Map([["max-age", "60"], ["private", "Set-Cookie, X-A"]]));
 * // 'max-age=60, private="Set-Cookie, X-A"'
 * ```
 */
export function formatCacheControl(d: Directives): string {
  const parts: string[] = [];
  for (const [name, v] of d) {
    if (v === true) parts.push(name);
    else if (TOKEN.test(v)) parts.push(`${name}=${v}`);
    else parts.push(`${name}="${v.replace(/[\\"]/g, (c) => "\\" + c)}"`);
  }
  return parts.join(", ");
}

/**
 * A directive's delta-seconds, in seconds: undefined when absent, 0 when its value is no
 * number (or it has none), at most 2^31.
 *
 * @example
 * ```ts
 * import { deltaSeconds, parseCacheControl } from "./cache_control.ts";
 * deltaSeconds(parseCacheControl("max-age=99999999999"), "max-age"); // 2147483648
 * deltaSeconds(parseCacheControl("max-age=soon"), "max-age"); // 0
 * ```
 */
export function deltaSeconds(d: Directives, name: string): number | undefined {
  const v = d.get(name);
  if (v === undefined) return undefined;
  if (v === true || !/^\d+$/.test(v)) return 0;
  return Math.min(Number(v), MAX_DELTA_SECONDS);
}

/**
 * The field names a qualified `no-cache="..."` or `private="..."` lists (lower case), `[]`
 * for the unqualified directive, undefined when absent.
 *
 * @example
 * ```ts
 * import { fieldNames, parseCacheControl } from "./cache_control.ts";
 * fieldNames(parseCacheControl('no-cache="Set-Cookie, X-Token"'), "no-cache"); // ["set-cookie", "x-token"]
 * ```
 */
export function fieldNames(d: Directives, name: string): string[] | undefined {
  const v = d.get(name);
  if (v === undefined) return undefined;
  if (v === true) return [];
  return v.split(",").map((f) => f.trim().toLowerCase()).filter((f) => f !== "");
}
