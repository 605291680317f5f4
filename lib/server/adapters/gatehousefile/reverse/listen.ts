/**
 * Listener addresses in the JSON → Gatehousefile direction: a server's `listen` list gives the
 * port of its site addresses and, when it names interfaces (or `listen_protocols` limits the
 * protocols of some), the sites' `bind` directives: one per protocol list, with a
 * `protocols` block where the list is not the default.
 *
 * @module
 */
import { childPath, type Problems } from "../../../caddyfile/writer/problems.ts";
import { type Line, line } from "../../../caddyfile/writer/tokens.ts";

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

/**
 * The `bind` lines of a site on a server listening on `listen` with `protocols` (the server's
 * `listen_protocols`, aligned with `listen`); none when the site address alone gives them.
 */
export function bindLines(
  listen: ListenAddress[],
  protocols: unknown,
  path: string,
  problems: Problems,
): Line[] {
  const lists: (string[] | null)[] = listen.map(() => null);
  if (protocols !== undefined) {
    if (!Array.isArray(protocols) || protocols.length !== listen.length) {
      problems.add(path, "listen_protocols must hold one entry per listen address");
    } else {
      protocols.forEach((p, i) => {
        if (p === null) return;
        if (
          Array.isArray(p) && p.length > 0 &&
          p.every((x) => typeof x === "string" && x !== "")
        ) lists[i] = p as string[];
        else problems.add(childPath(path, i), "expected a list of protocols (h1, h2, h2c, h3)");
      });
    }
  }
  const named = listen.some((l) => l.host !== "" || l.network !== "");
  if (!named && lists.every((p) => p === null)) return [];
  // addresses with the same protocols share one bind directive
  const groups = new Map<string, { addresses: string[]; protocols: string[] | null }>();
  listen.forEach((l, i) => {
    const key = JSON.stringify(lists[i]);
    const g = groups.get(key) ?? { addresses: [], protocols: lists[i] };
    g.addresses.push(bindArg(l));
    groups.set(key, g);
  });
  return [...groups.values()].map((g) =>
    line(
      ["bind", ...g.addresses],
      g.protocols ? [line(["protocols", ...g.protocols])] : undefined,
    )
  );
}
