/**
 * What the `push` handler pushes: the resources of `Link` response fields (Caddy's reading of
 * them: `<uri>` then `;`-separated parameters, several links split on `,`), and the request
 * target a push target becomes: an absolute path on the request's own origin, or nothing.
 *
 * @module
 */

/** One link of a `Link` field. */
export interface LinkResource {
  /** The URI between `<` and `>`, trimmed. */
  uri: string;
  /** Parameters by name (`rel` → `preload`; a bare `nopush` → `nopush`), values as written. */
  params: Record<string, string>;
}

/**
 * Parses a `Link` field value as Caddy does: each `,`-separated part with a `<` before a `>`
 * gives one resource; parts without both (or with `>` first) are skipped. Never throws.
 *
 * @example
 * ```ts
 * import { parseLinkHeader } from "./link.ts";
 * parseLinkHeader("</a.css>; rel=preload; as=style, </b.js>; nopush");
 * // [{ uri: "/a.css", params: { rel: "preload", as: "style" } },
 * //  { uri: "/b.js", params: { nopush: "nopush" } }]
 * ```
 */
export function parseLinkHeader(header: string): LinkResource[] {
  const out: LinkResource[] = [];
  if (header === "") return out;
  for (const link of header.split(",")) {
    const li = link.indexOf("<");
    const ri = link.indexOf(">");
    if (li < 0 || ri < 0 || ri < li) continue;
    const params: Record<string, string> = Object.create(null);
    for (const param of link.slice(ri + 1).trim().split(";")) {
      const p = param.trim();
      const eq = p.indexOf("=");
      const key = (eq < 0 ? p : p.slice(0, eq)).trim();
      if (key === "") continue;
      params[key] = eq < 0 ? key : p.slice(eq + 1).trim();
    }
    out.push({ uri: link.slice(li + 1, ri).trim(), params });
  }
  return out;
}

/** True for a URI with a scheme or a protocol-relative one (Caddy's test: never pushed). */
export function isRemoteResource(uri: string): boolean {
  return uri.startsWith("//") || uri.startsWith("http://") || uri.startsWith("https://");
}

/** Bytes allowed as they are in a pushed path and query (RFC 3986 pchar, `/`, `?`, `%`). */
const KEEP = new Uint8Array(128);
for (
  const ch of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/?%"
) KEEP[ch.charCodeAt(0)] = 1;

const HEX = /^[0-9A-Fa-f]{2}$/;

/** `/path?query` with other bytes percent-encoded (UTF-8); null for a bad `%` escape. */
function encodeTarget(s: string): string | null {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 37 /* % */ && !HEX.test(s.slice(i + 1, i + 3))) return null;
    if (c < 128 && KEEP[c]) out += s[i];
    else out += encodeURIComponent(s[i] + (c >= 0xd800 && c < 0xdc00 ? s[++i] ?? "" : ""));
  }
  return out;
}

/**
 * The request target (`/path?query`) to push for `target` on a connection of `scheme` whose
 * request named `host`, or null when it cannot be pushed: Go's rules for a push target (an
 * absolute path, or an absolute URL of the connection's scheme with a host; no control
 * characters, valid `%` escapes, the fragment dropped) and two more: the same origin (an
 * absolute URL must name `host`), and no path starting with `//` (which some servers would
 * read as an authority), so a protocol-relative `//...` target is refused too.
 *
 * @example
 * ```ts
 * import { pushPath } from "./link.ts";
 * pushPath("/a b.css#x", "https", "example.com"); // "/a%20b.css"
 * pushPath("https://example.com/app.js?v=1", "https", "example.com"); // "/app.js?v=1"
 * pushPath("https://cdn.example/app.js", "https", "example.com"); // null
 * pushPath("style.css", "https", "example.com"); // null
 * ```
 */
export function pushPath(target: string, scheme: string, host: string): string | null {
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return null;
  }
  const hash = target.indexOf("#");
  let t = hash < 0 ? target : target.slice(0, hash);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(t);
  if (m) {
    if (m[1].toLowerCase() !== scheme || !t.startsWith("//", m[0].length)) return null;
    const rest = t.slice(m[0].length + 2);
    const end = rest.search(/[/?]/);
    const authority = end < 0 ? rest : rest.slice(0, end);
    if (authority === "" || authority.toLowerCase() !== host.toLowerCase()) return null;
    t = end < 0 ? "/" : rest[end] === "?" ? `/${rest.slice(end)}` : rest.slice(end);
  }
  if (!t.startsWith("/") || t.startsWith("//")) return null;
  return encodeTarget(t);
}
