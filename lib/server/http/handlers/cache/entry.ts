/**
 * A stored answer and what RFC 9111 computes from it: its age (§4.2.3), its freshness lifetime
 * (§4.2.1: `s-maxage`, `max-age`, `Expires - Date`, else the configured `ttl` where a default
 * is allowed), the directives that rule serving it stale (`no-cache`, `must-revalidate`,
 * `proxy-revalidate`, `s-maxage`, `stale-while-revalidate`, `stale-if-error`), its validators,
 * and the update a `304` brings (§4.3.4).
 *
 * @module
 */
import { deltaSeconds, type Directives, fieldNames, parseCacheControl } from "./cache_control.ts";
import { parseHttpDate } from "./http_date.ts";

/** Where an entry's body is. */
export type BodyRef =
  /** In memory. */
  | { kind: "memory"; bytes: Uint8Array<ArrayBuffer> }
  /** In a file of the disk storage. */
  | { kind: "file"; path: string; size: number };

/** One stored answer (one variant of a key). */
export interface Entry {
  /** The key it is stored under. */
  readonly key: string;
  /** The request's URL (`scheme://host/path?query`), for purging by URL. */
  readonly url: string;
  /** The request's method. */
  readonly method: string;
  /** The status. */
  status: number;
  /** The fields as stored (lower-case names; no hop-by-hop fields, no `Age`). */
  headers: [string, string][];
  /** The request fields `Vary` names (lower case), and their values when stored. */
  readonly vary: readonly string[];
  readonly varyValues: readonly string[];
  /** When the request that got it was sent, and when the answer came (ms since the epoch). */
  requestTime: number;
  responseTime: number;
  /** Its age when it came (ms). */
  initialAge: number;
  /** Its freshness lifetime (ms). */
  lifetime: number;
  /** How long it may be served stale while revalidating, or when the upstream fails (ms). */
  swr: number;
  sie: number;
  /** It must be validated before each use (`no-cache`). */
  noCache: boolean;
  /** It must not be served stale (`must-revalidate`, `proxy-revalidate`, `s-maxage`). */
  mustRevalidate: boolean;
  /** Its validators. */
  etag: string | null;
  lastModified: string | null;
  /** Where its body is, and its size. */
  body: BodyRef;
  /** Bytes it takes in the storage's accounting. */
  size: number;
  /** When it can be dropped (ms since the epoch). */
  keepUntil: number;
}

/** Statuses a cache may give a default lifetime (RFC 9110 §15.1, heuristically cacheable). */
export const HEURISTIC_STATUSES: ReadonlySet<number> = new Set([
  200,
  203,
  204,
  300,
  301,
  308,
  404,
  405,
  410,
  414,
  501,
]);

/** Hop-by-hop fields (RFC 9110 §7.6.1) and fields a cache does not store. */
const NOT_STORED = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "proxy-authenticate",
  "age",
]);

/** Fields a `304` must not replace in a stored answer (RFC 9111 §3.2). */
const KEPT_ON_UPDATE = new Set(["content-length", "content-encoding", "content-range"]);

/** The entry's age now (ms): corrected initial age plus resident time. */
export function currentAge(e: Entry, now: number): number {
  return e.initialAge + (now - e.responseTime);
}

/** Milliseconds of freshness left (negative when stale). */
export function freshnessLeft(e: Entry, now: number): number {
  return e.lifetime - currentAge(e, now);
}

/** Facts about an answer that decide whether and how it is stored. */
export interface Storability {
  /** The answer's directives. */
  cc: Directives;
  /** The freshness lifetime (ms), or null when the answer has no explicit one. */
  explicit: number | null;
  /** Fields left out of the stored copy (`no-cache="..."`, `private="..."`). */
  dropped: Set<string>;
}

/** The freshness an answer states itself (ms), or null when it states none (RFC 9111 §4.2.1). */
export function explicitLifetime(cc: Directives, h: Headers, responseTime: number): number | null {
  const s = deltaSeconds(cc, "s-maxage");
  if (s !== undefined) return s * 1000;
  const m = deltaSeconds(cc, "max-age");
  if (m !== undefined) return m * 1000;
  const expires = h.get("expires");
  if (expires !== null) {
    const exp = parseHttpDate(expires);
    // an invalid Expires, "0" among them, is a time in the past (§5.3)
    if (Number.isNaN(exp)) return 0;
    const date = parseHttpDate(h.get("date"));
    return Math.max(0, exp - (Number.isNaN(date) ? responseTime : date));
  }
  return null;
}

/** The answer's directives and the fields its qualified directives drop. */
export function storability(h: Headers, responseTime: number): Storability {
  const cc = parseCacheControl(h.get("cache-control"));
  const dropped = new Set<string>();
  for (const d of ["no-cache", "private"]) {
    for (const f of fieldNames(cc, d) ?? []) dropped.add(f);
  }
  return { cc, explicit: explicitLifetime(cc, h, responseTime), dropped };
}

/** The corrected initial age of an answer (ms, RFC 9111 §4.2.3). */
export function initialAge(h: Headers, requestTime: number, responseTime: number): number {
  const date = parseHttpDate(h.get("date"));
  const apparent = Number.isNaN(date) ? 0 : Math.max(0, responseTime - date);
  const ageField = h.get("age");
  const age = ageField !== null && /^\d+$/.test(ageField.trim())
    ? Math.min(Number(ageField.trim()), 2 ** 31) * 1000
    : 0;
  return Math.max(apparent, age + (responseTime - requestTime));
}

/** The fields of an answer as stored (lower case, without hop-by-hop and dropped ones). */
export function storedFields(h: Headers, dropped: ReadonlySet<string>): [string, string][] {
  const out: [string, string][] = [];
  const conn = (h.get("connection") ?? "").toLowerCase().split(",").map((s) => s.trim());
  for (const [k, v] of h) {
    if (NOT_STORED.has(k) || dropped.has(k) || conn.includes(k)) continue;
    out.push([k, v]);
  }
  return out;
}

/** The directives of the stored answer that rule its use, set on `e`. */
export function applyDirectives(e: Entry, cc: Directives): void {
  e.noCache = cc.get("no-cache") === true || cc.get("no-cache") === "";
  e.mustRevalidate = cc.has("must-revalidate") || cc.has("proxy-revalidate") ||
    cc.has("s-maxage");
  e.swr = (deltaSeconds(cc, "stale-while-revalidate") ?? 0) * 1000;
  e.sie = (deltaSeconds(cc, "stale-if-error") ?? 0) * 1000;
}

/** A field of an entry (the first with that lower-case name). */
export function field(e: Entry, name: string): string | null {
  for (const [k, v] of e.headers) if (k === name) return v;
  return null;
}

/**
 * A `304`'s update of a stored answer (RFC 9111 §4.3.4): its fields replace the stored ones
 * of the same name (the body's framing fields excepted), and the answer is fresh again from
 * the time the `304` came.
 */
export function updateFrom304(
  e: Entry,
  h: Headers,
  requestTime: number,
  responseTime: number,
  ttl: number,
): void {
  const fresh = storedFields(h, new Set());
  const replaced = new Set(fresh.map(([k]) => k).filter((k) => !KEPT_ON_UPDATE.has(k)));
  e.headers = [
    ...e.headers.filter(([k]) => !replaced.has(k)),
    ...fresh.filter(([k]) => replaced.has(k)),
  ];
  const merged = new Headers(e.headers);
  const cc = parseCacheControl(merged.get("cache-control"));
  applyDirectives(e, cc);
  e.requestTime = requestTime;
  e.responseTime = responseTime;
  e.initialAge = initialAge(h, requestTime, responseTime);
  e.lifetime = explicitLifetime(cc, merged, responseTime) ?? ttl;
  e.etag = merged.get("etag");
  e.lastModified = merged.get("last-modified");
}
