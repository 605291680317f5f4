/**
 * The PROXY protocol header `reverse_proxy` sends first on each upstream connection with
 * `transport http { proxy_protocol v1|v2 }` (current Caddy's `httptransport.go`, since v2.7.0),
 * written with the listener wrapper's encoders (`listeners/wrappers/proxy_header.ts`, whose
 * parser reads it back):
 *
 * - the source is the request's client: its IP (`{http.request.client_ip}`: the peer, which is
 *   the address of an incoming PROXY header when the listener has the `proxy_protocol`
 *   wrapper, or the address the server's `trusted_proxies` took from a header) and, when that
 *   IP is the peer's, the peer's port (Caddy sends 0, as it keeps the IP only); IPv4-mapped
 *   IPv6 addresses go as IPv4, zones are dropped;
 * - the destination is the zero address of the source's family, port 0, as Caddy's ("it's
 *   kind of impossible to know");
 * - a client without an IP (a unix socket peer) goes as `PROXY UNKNOWN` (v1) or a PROXY
 *   command with no addresses (v2); active health checks, which relay no client, send
 *   `PROXY UNKNOWN` (v1) or the LOCAL command (v2), the header the protocol has for them.
 *
 * @module
 */
import { encodeProxyV1, encodeProxyV2 } from "../../../listeners/wrappers/proxy_header.ts";
import { isV4, parseIP } from "../../../net/ip.ts";
import type { RequestContext } from "../../context.ts";

/** `proxy_protocol`: the header's version. */
export type ProxyProtocolVersion = "v1" | "v2";

/** The source address a header carries. */
export interface ProxySource {
  /** An IPv4 address (dotted) or an IPv6 one (RFC 5952 text). */
  hostname: string;
  port: number;
}

const UNKNOWN_V1 = new TextEncoder().encode("PROXY UNKNOWN\r\n");

/**
 * An IP address as the header carries it: dotted IPv4 (an IPv4-mapped IPv6 address too), or
 * IPv6 in RFC 5952 form (lower case, the longest run of two or more zero groups as `::`);
 * null when `ip` is not an IP address.
 *
 * @example
 * ```ts
 * import { headerIP } from "./proxy_protocol.ts";
 * headerIP("::ffff:192.0.2.1"); // "192.0.2.1"
 * headerIP("2001:DB8:0:0:0:0:0:1%eth0"); // "2001:db8::1"
 * ```
 */
export function headerIP(ip: string): string | null {
  const n = parseIP(ip);
  if (n === null) return null;
  if (isV4(n)) {
    const v = Number(n & 0xffffffffn);
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  }
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((n >> BigInt(i * 16)) & 0xffffn).toString(16));
  let best = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== "0") {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > bestLength) {
      best = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(":");
  return `${groups.slice(0, best).join(":")}::${groups.slice(best + bestLength).join(":")}`;
}

/**
 * The header for a connection relaying `source` (null: no address to tell).
 *
 * @example
 * ```ts
 * import { proxyProtocolHeader } from "./proxy_protocol.ts";
 * const h = proxyProtocolHeader("v1", { hostname: "192.0.2.1", port: 5000 });
 * new TextDecoder().decode(h); // "PROXY TCP4 192.0.2.1 0.0.0.0 5000 0\r\n"
 * ```
 */
export function proxyProtocolHeader(
  version: ProxyProtocolVersion,
  source: ProxySource | null,
): Uint8Array {
  const hostname = source ? headerIP(source.hostname) : null;
  if (hostname === null || !source) return version === "v1" ? UNKNOWN_V1 : encodeProxyV2({});
  const src = { hostname, port: source.port };
  const destination = { hostname: hostname.includes(":") ? "::" : "0.0.0.0", port: 0 };
  return version === "v1"
    ? encodeProxyV1(src, destination)
    : encodeProxyV2({ source: src, destination });
}

/**
 * The header of a connection that relays no client (active health checks): `PROXY UNKNOWN`
 * (v1) or the LOCAL command (v2).
 *
 * @example
 * ```ts
 * import { proxyProtocolLocal } from "./proxy_protocol.ts";
 * proxyProtocolLocal("v2")[12]; // 0x20
 * ```
 */
export function proxyProtocolLocal(version: ProxyProtocolVersion): Uint8Array {
  return version === "v1" ? UNKNOWN_V1 : encodeProxyV2({ local: true });
}

/**
 * The client a request's upstream connection relays: its IP, and the peer's port when that IP
 * is the peer's; null for a client without an IP.
 */
export function clientSource(c: RequestContext): ProxySource | null {
  const ip = c.clientIP;
  if (!ip || headerIP(ip) === null) return null;
  const port = ip === c.remoteHost ? Number(c.remotePort) || 0 : 0;
  return { hostname: ip, port };
}

/** What a request sends first on its upstream connections, and the pool key they share. */
export interface Preface {
  /** The header's bytes. */
  bytes: Uint8Array;
  /**
   * Connections are kept apart by it (`<client>-><dial>`, as Caddy's transport keys them by
   * the client address), so a connection only ever carries one client's requests.
   */
  key: string;
}

/**
 * The preface of a request to `dial` with `proxy_protocol` `version`.
 *
 * @example
 * ```ts ignore
 * const p = requestPreface("v2", c, "127.0.0.1:8080"); // p.key: "192.0.2.1:5000->127.0.0.1:8080"
 * ```
 */
export function requestPreface(
  version: ProxyProtocolVersion,
  c: RequestContext,
  dial: string,
): Preface {
  const source = clientSource(c);
  const hostname = source ? headerIP(source.hostname)! : null;
  const client = hostname === null
    ? "unknown"
    : hostname.includes(":")
    ? `[${hostname}]:${source!.port}`
    : `${hostname}:${source!.port}`;
  return { bytes: proxyProtocolHeader(version, source), key: `${client}->${dial}` };
}
