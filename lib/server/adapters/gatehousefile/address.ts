/**
 * Site addresses: `[scheme://]host[:port][/path]`, where host may be a wildcard
 * (`*.example.com`), an IP, a placeholder or empty (`:8080` serves every host).
 *
 * @module
 */
import { formatIPv6, joinHostPort, parseIPv6, splitHostPort } from "../../caddyfile/netaddr.ts";
import { goAtoi } from "../../caddyfile/import_args.ts";

/** A parsed site address. */
export interface SiteAddress {
  /** The address as written. */
  original: string;
  /** `http`, `https` or "" (others are refused later). */
  scheme: string;
  /** Host, lower-cased outside placeholders; "" matches every host. */
  host: string;
  /** Port as written, or "". */
  port: string;
  /** Path with leading `/`, or "" (deprecated in site addresses). */
  path: string;
}

/** Default ports (Caddy's `DefaultHTTPPort` / `DefaultHTTPSPort`). */
export const DEFAULT_HTTP_PORT = 80;
/** Default HTTPS port. */
export const DEFAULT_HTTPS_PORT = 443;

/**
 * Parses a site address (not yet normalized). Throws on an invalid port.
 *
 * @example
 * ```ts
 * import { parseSiteAddress } from "./address.ts";
 * parseSiteAddress("https://Example.com:8443/api");
 * // { original: "https://Example.com:8443/api", scheme: "https", host: "Example.com", port: "8443", path: "/api" }
 * ```
 */
export function parseSiteAddress(str: string): SiteAddress {
  if (str.length > 4096) str = str.slice(0, 4096);
  let remaining = str.trim();
  const a: SiteAddress = { original: remaining, scheme: "", host: "", port: "", path: "" };
  const sep = remaining.indexOf("://");
  if (sep >= 0) {
    a.scheme = remaining.slice(0, sep);
    remaining = remaining.slice(sep + 3);
  }
  const slash = remaining.indexOf("/");
  const hostPart = slash < 0 ? remaining : remaining.slice(0, slash);
  try {
    [a.host, a.port] = splitHostPort(hostPart);
  } catch {
    try {
      [a.host, a.port] = splitHostPort(hostPart + ":");
    } catch {
      a.host = hostPart;
    }
  }
  if (slash >= 0) a.path = "/" + remaining.slice(slash + 1);
  if (a.port !== "") {
    const n = goAtoi(a.port);
    if (n === undefined) {
      throw new Error(
        `invalid port '${a.port}': strconv.Atoi: parsing "${a.port}": invalid syntax`,
      );
    }
    if (n < 0 || n > 65535) throw new Error(`port ${n} is out of range`);
  }
  return a;
}

/** Lower-cases the scheme and host (not inside placeholders) and canonicalizes IPv6 hosts. */
export function normalizeSiteAddress(a: SiteAddress): SiteAddress {
  let host = a.host.trim();
  const v6 = parseIPv6(host);
  if (v6 && !isV4Mapped(v6.groups)) host = formatIPv6(v6.groups, v6.zone);
  return {
    original: a.original,
    scheme: lowerExceptPlaceholders(a.scheme),
    host: lowerExceptPlaceholders(host),
    port: a.port,
    path: a.path,
  };
}

function isV4Mapped(g: number[]): boolean {
  return g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
}

/** Lower-cases `s` except inside unescaped `{...}` placeholders. */
export function lowerExceptPlaceholders(s: string): string {
  let out = "";
  let escaped = false, inPlaceholder = false;
  for (const ch of s) {
    if (ch === "\\" && !escaped) {
      escaped = true;
      out += ch;
      continue;
    }
    if (ch === "{" && !escaped) inPlaceholder = true;
    if (ch === "}" && inPlaceholder && !escaped) inPlaceholder = false;
    out += inPlaceholder ? ch : ch.toLowerCase();
    escaped = false;
  }
  return out;
}

/** The address as a URL-like string, as Caddy prints it in messages. */
export function siteAddressString(a: SiteAddress): string {
  if (a.host === "" && a.port === "") return "";
  const scheme = a.scheme !== "" ? a.scheme : a.port === "443" ? "https" : "http";
  let s = `${scheme}://`;
  if (
    a.port !== "" &&
    ((scheme === "https" && a.port !== "443") || (scheme === "http" && a.port !== "80"))
  ) s += joinHostPort(a.host, a.port);
  else s += a.host;
  return s + a.path;
}

/**
 * Length of `s` without wildcards and placeholders: how specific a host or path is.
 *
 * @example
 * ```ts
 * import { specificity } from "./address.ts";
 * specificity("*.example.com"); // 12
 * specificity("{host}.x"); // 2
 * ```
 */
export function specificity(s: string): number {
  let l = s.length - (s.split("*").length - 1);
  while (s.length > 0) {
    const start = s.indexOf("{");
    if (start < 0) return l;
    const endRel = s.slice(start).indexOf("}");
    const end = endRel + start + 1;
    if (end <= start) return l;
    l -= end - start;
    s = s.slice(end);
  }
  return l;
}
