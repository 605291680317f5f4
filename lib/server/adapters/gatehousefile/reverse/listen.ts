/**
 * Listener addresses in the JSON → Gatehousefile direction: a server's `listen` list gives the
 * port of its site addresses and, when it names interfaces, the sites' `bind` directive.
 *
 * @module
 */

/** A listen address split into network, host and port (Caddy's `SplitNetworkAddress`). */
export interface ListenAddress {
  /** `tcp4`, `udp`, `unix`, ... or empty. */
  network: string;
  /** Host or IP (IPv6 without brackets), or a socket path. */
  host: string;
  /** Port or port range, empty for sockets. */
  port: string;
}

/** Splits `[network/]host:port`. */
export function splitListen(addr: string): ListenAddress | undefined {
  let network = "", rest = addr;
  const slash = addr.indexOf("/");
  if (slash > 0 && !addr.slice(0, slash).includes(":")) {
    network = addr.slice(0, slash).toLowerCase();
    rest = addr.slice(slash + 1);
  }
  if (network.startsWith("unix") || network === "fd" || network === "fdgram") {
    return { network, host: rest, port: "" };
  }
  let host: string, port: string;
  if (rest.startsWith("[")) {
    const end = rest.indexOf("]");
    if (end < 0 || rest[end + 1] !== ":") return undefined;
    host = rest.slice(1, end);
    port = rest.slice(end + 2);
  } else {
    const colon = rest.lastIndexOf(":");
    if (colon < 0) return undefined;
    host = rest.slice(0, colon);
    port = rest.slice(colon + 1);
    if (host.includes(":")) return undefined;
  }
  if (!/^\d+(-\d+)?$/.test(port)) return undefined;
  return { network, host, port };
}

/** The `bind` argument for a listen address (what the adapter joins with the site's port). */
export function bindArg(a: ListenAddress): string {
  const host = a.host;
  return a.network ? `${a.network}/${host}` : host;
}
