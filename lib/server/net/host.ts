/**
 * The request host: one validated `uri-host[:port]` for routing, placeholders, logs and the
 * `Host` a proxy sends upstream. A host is a DNS-style name (letters, digits, `-`, `.`, `_`,
 * `~`), a dotted IPv4 address or a bracketed IPv6 address, with an optional port of 1-5
 * digits from 1 to 65535. Everything else (`/ ? # @`, spaces, control characters, percent
 * escapes, other sub-delimiters, empty or out-of-range ports such as 0, zone ids) is refused, so
 * nothing from a malformed Host can reach a path, a request line or a header upstream.
 *
 * @module
 */
import { parseIP } from "./ip.ts";

/** Name characters: RFC 3986 `unreserved` (ALPHA DIGIT - . _ ~). */
const NAME = new Uint8Array(128);
for (const ch of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~") {
  NAME[ch.charCodeAt(0)] = 1;
}

function validPort(s: string, from: number): boolean {
  const n = s.length - from;
  if (n < 1 || n > 5) return false;
  let v = 0;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
    v = v * 10 + (c - 48);
  }
  return v >= 1 && v <= 65535; // port 0 names no port a client can reach
}

/**
 * True when `s` is a valid request host: `name`, `name:port`, `[v6]` or `[v6]:port`.
 *
 * @example
 * ```ts
 * import { validHost } from "./host.ts";
 * validHost("example.com:8080"); // true
 * validHost("[::1]"); // true
 * validHost("example.com/evil"); // false
 * validHost("a:99999"); // false
 * validHost("a:0"); // false
 * ```
 */
export function validHost(s: string): boolean {
  const len = s.length;
  if (len === 0 || len > 1024) return false;
  if (s.charCodeAt(0) === 91 /* [ */) {
    const close = s.indexOf("]");
    if (close < 3) return false;
    const inner = s.slice(1, close);
    if (!/^[0-9A-Fa-f:.]+$/.test(inner) || !inner.includes(":") || parseIP(inner) === null) {
      return false;
    }
    if (close === len - 1) return true;
    return s.charCodeAt(close + 1) === 58 /* : */ && validPort(s, close + 2);
  }
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i);
    if (c === 58 /* : */) return i > 0 && validPort(s, i + 1);
    if (c >= 128 || NAME[c] === 0) return false;
  }
  return true;
}

/**
 * The one spelling of a request host, or null when it is not a valid host: a name's trailing
 * dot (the DNS root, `a.example.` is `a.example`) is dropped, so a route for `a.example`
 * cannot be stepped past by adding it; a name with an empty label (`.a`, `a..b`, `a..`) is
 * refused. Case and IP literals are kept as written (matchers compare without case).
 *
 * @example
 * ```ts
 * import { canonicalHost } from "./host.ts";
 * canonicalHost("a.example.:8080"); // "a.example:8080"
 * canonicalHost("a..example"); // null
 * canonicalHost("[::1]:80"); // "[::1]:80"
 * ```
 */
export function canonicalHost(s: string): string | null {
  if (!validHost(s)) return null;
  if (s.charCodeAt(0) === 91 /* [ */) return s;
  const colon = s.indexOf(":");
  const name = colon < 0 ? s : s.slice(0, colon);
  if (name.charCodeAt(0) !== 46 /* . */ && name.indexOf("..") < 0) {
    if (name.charCodeAt(name.length - 1) !== 46) return s;
    return name.slice(0, -1) + (colon < 0 ? "" : s.slice(colon));
  }
  return null;
}

/** A request target in absolute form, split. */
export interface AbsoluteTarget {
  /** Lower-case scheme (`http` or `https`). */
  scheme: string;
  /** The authority (host and optional port). */
  authority: string;
  /** Path and query (`/` when the target had no path). */
  rest: string;
}

/**
 * Splits an absolute-form request target (`http://host:port/path?q`); null when the target is
 * not in absolute form. The authority is returned as written, for `validHost` to judge.
 *
 * @example
 * ```ts
 * import { splitAbsoluteTarget } from "./host.ts";
 * splitAbsoluteTarget("http://a.example/x?y"); // { scheme: "http", authority: "a.example", rest: "/x?y" }
 * splitAbsoluteTarget("/x"); // null
 * ```
 */
export function splitAbsoluteTarget(target: string): AbsoluteTarget | null {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(target);
  if (!m) return null;
  const start = m[0].length;
  let end = start;
  while (end < target.length) {
    const c = target.charCodeAt(end);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) break;
    end++;
  }
  let rest = target.slice(end);
  if (rest === "" || rest.charCodeAt(0) !== 47) rest = "/" + rest;
  return { scheme: m[1].toLowerCase(), authority: target.slice(start, end), rest };
}

/** The URLs of requests a listener built itself, as received (see `receivedURL`). */
const RECEIVED = new WeakMap<Request, string>();

/**
 * Records the URL a listener built for `request` before `new Request` normalised it (WHATWG
 * URL parsing lower-cases the host and removes dot segments; Go, so Caddy, and `Deno.serve`'s
 * own requests keep both as received).
 *
 * @example
 * ```ts
 * import { receivedURL, recordReceivedURL } from "./host.ts";
 * const r = new Request("http://example.test/a/../b");
 * recordReceivedURL(r, "http://Example.TEST/a/../b");
 * receivedURL(r); // "http://Example.TEST/a/../b"
 * ```
 */
export function recordReceivedURL(request: Request, url: string): void {
  if (url !== request.url) RECEIVED.set(request, url);
}

/** The request's URL as received: recorded by the listener, else `request.url`. */
export function receivedURL(request: Request): string {
  return RECEIVED.get(request) ?? request.url;
}

/** The URL a listener builds for a request, and the host that replaces `Host`, if any. */
export interface RequestURL {
  /** The request URL (scheme of the connection, settled host, target path and query). */
  url: string;
  /** The absolute-form target's authority, which replaces `Host`; null in origin form. */
  host: string | null;
}

/**
 * The URL of a request for a listener that builds it from the request line and the `Host`
 * fields itself (the `node` engine): the authority of an absolute-form target wins over
 * `Host` (RFC 9112 §3.2.2), else the `Host` field, else `fallbackHost`. Null for a request to
 * answer 400: more than one `Host` field, a `Host` or authority that is not a valid host, an
 * absolute-form target whose scheme is not http(s).
 *
 * @example
 * ```ts
 * import { requestURL } from "./host.ts";
 * requestURL("http://a.example/x", ["b.example"], "http", "127.0.0.1:80");
 * // { url: "http://a.example/x", host: "a.example" }
 * requestURL("/x", ["b.example/evil"], "http", "127.0.0.1:80"); // null
 * ```
 */
export function requestURL(
  target: string,
  hostFields: readonly string[],
  scheme: string,
  fallbackHost: string,
): RequestURL | null {
  if (hostFields.length > 1) return null;
  const header = hostFields[0] ?? "";
  if (header !== "" && !validHost(header)) return null;
  const abs = splitAbsoluteTarget(target);
  if (abs) {
    if ((abs.scheme !== "http" && abs.scheme !== "https") || !validHost(abs.authority)) {
      return null;
    }
    return { url: `${scheme}://${abs.authority}${abs.rest}`, host: abs.authority };
  }
  const path = target.startsWith("/") ? target : `/${target}`;
  return { url: `${scheme}://${header || fallbackHost}${path}`, host: null };
}

/** A server name as certificates are looked up by: lower case, no trailing dot, no brackets around IPv6. */
export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, "").replace(/^\[(.*)\]$/, "$1");
}
