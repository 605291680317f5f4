/**
 * Caddy network addresses: `[network/]host:port[-port]`, `:port`, `unix//path`.
 *
 * @module
 */

/** A parsed network address. */
export interface NetworkAddress {
  /** `tcp`, `tcp4`, `tcp6`, `udp`, `unix`, ... (default `tcp`). */
  network: string;
  /** Host (may be empty for all interfaces), or the socket path for unix networks. */
  host: string;
  /** First port of the range (0 for unix). */
  startPort: number;
  /** Last port of the range. */
  endPort: number;
}

/**
 * Parses a network address; throws on malformed input.
 *
 * @example
 * ```ts
 * import { parseNetworkAddress } from "./address.ts";
 * parseNetworkAddress("localhost:2019"); // { network: "tcp", host: "localhost", startPort: 2019, endPort: 2019 }
 * ```
 */
export function parseNetworkAddress(raw: string): NetworkAddress {
  let network = "tcp";
  let rest = raw.trim();
  const slash = rest.indexOf("/");
  if (slash >= 0) {
    network = rest.slice(0, slash).toLowerCase();
    rest = rest.slice(slash + 1);
  }
  if (network.startsWith("unix")) {
    if (!rest) throw new Error(`invalid unix socket address: ${raw}`);
    return { network, host: rest, startPort: 0, endPort: 0 };
  }
  const colon = rest.lastIndexOf(":");
  if (colon < 0) throw new Error(`missing port in address: ${raw}`);
  let host = rest.slice(0, colon);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  const ports = rest.slice(colon + 1);
  const m = /^(\d+)(?:-(\d+))?$/.exec(ports);
  if (!m) throw new Error(`invalid port in address: ${raw}`);
  const startPort = Number(m[1]);
  const endPort = m[2] !== undefined ? Number(m[2]) : startPort;
  if (startPort > 65535 || endPort > 65535 || endPort < startPort) {
    throw new Error(`invalid port range in address: ${raw}`);
  }
  return { network, host, startPort, endPort };
}

/** Formats host and port back into `host:port` (IPv6 hosts bracketed). */
export function joinHostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** True for loopback hosts (`localhost`, `127.x`, `::1`) and unix sockets. */
export function isLoopback(addr: NetworkAddress): boolean {
  if (addr.network.startsWith("unix")) return true;
  return addr.host === "localhost" || addr.host === "::1" || addr.host.startsWith("127.");
}

/** True when the address listens on all interfaces (empty host, `0.0.0.0`, `::`). */
export function isWildcard(addr: NetworkAddress): boolean {
  return !addr.network.startsWith("unix") &&
    (addr.host === "" || addr.host === "0.0.0.0" || addr.host === "::");
}
