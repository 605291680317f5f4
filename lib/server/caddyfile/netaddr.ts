/**
 * Host/port and network-address helpers with Go's exact rules (`net.SplitHostPort`,
 * `net.JoinHostPort`, `netip` IPv6 text form) and Caddy's network addresses
 * (`[network/]host[:port[-port]]`), as the adapter needs them to write the same listen
 * addresses Caddy writes.
 *
 * @module
 */

/** Go's `net.SplitHostPort`; throws with Go's message on malformed input. */
export function splitHostPort(hostport: string): [string, string] {
  const fail = (why: string): never => {
    throw new Error(`address ${hostport}: ${why}`);
  };
  const i = hostport.lastIndexOf(":");
  if (i < 0) fail("missing port in address");
  let host: string;
  let j = 0, k = 0;
  if (hostport[0] === "[") {
    const end = hostport.indexOf("]");
    if (end < 0) fail("missing ']' in address");
    if (end + 1 === hostport.length) fail("missing port in address");
    else if (end + 1 !== i) {
      if (hostport[end + 1] === ":") fail("too many colons in address");
      fail("missing port in address");
    }
    host = hostport.slice(1, end);
    j = 1;
    k = end + 1;
  } else {
    host = hostport.slice(0, i);
    if (host.includes(":")) fail("too many colons in address");
  }
  if (hostport.slice(j).includes("[")) fail("unexpected '[' in address");
  if (hostport.slice(k).includes("]")) fail("unexpected ']' in address");
  return [host, hostport.slice(i + 1)];
}

/** Go's `net.JoinHostPort`: brackets hosts that contain a colon. */
export function joinHostPort(host: string, port: string): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Parses an IPv4 address into 4 bytes, or undefined. */
export function parseIPv4(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === "0")) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

/** Parses an IPv6 address (optional `%zone`) into 8 groups, or undefined. */
export function parseIPv6(s: string): { groups: number[]; zone: string } | undefined {
  let zone = "";
  const pct = s.indexOf("%");
  if (pct >= 0) {
    zone = s.slice(pct + 1);
    if (zone === "") return undefined;
    s = s.slice(0, pct);
  }
  const lastColon = s.lastIndexOf(":");
  if (lastColon < 0) return undefined;
  if (s.slice(lastColon + 1).includes(".")) {
    // an embedded IPv4 tail becomes two groups
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (!v4) return undefined;
    const hi = ((v4[0] << 8) | v4[1]).toString(16), lo = ((v4[2] << 8) | v4[3]).toString(16);
    s = `${s.slice(0, lastColon + 1)}${hi}:${lo}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const parse = (h: string): number[] | undefined => {
    if (h === "") return [];
    const out: number[] = [];
    for (const g of h.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const left = parse(halves[0]);
  const right = halves.length === 2 ? parse(halves[1]) : [];
  if (!left || !right) return undefined;
  const total = left.length + right.length;
  let groups: number[];
  if (halves.length === 2) {
    if (total > 7) return undefined;
    groups = [...left, ...new Array(8 - total).fill(0), ...right];
  } else {
    if (total !== 8) return undefined;
    groups = left;
  }
  return { groups, zone };
}

/** The text form Go's `netip.Addr.String` gives an IPv6 address (RFC 5952). */
export function formatIPv6(groups: number[], zone = ""): string {
  let bestStart = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i >= 2 && j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  let out = "";
  for (let i = 0; i < 8; i++) {
    if (i === bestStart) {
      out += "::";
      i += bestLen - 1;
      continue;
    }
    if (out !== "" && !out.endsWith(":")) out += ":";
    out += groups[i].toString(16);
  }
  return zone ? `${out}%${zone}` : out;
}

/** True when `host` is an IP address (v4 or v6, brackets not allowed). */
export function isIP(host: string): boolean {
  return parseIPv4(host) !== undefined || parseIPv6(host) !== undefined;
}

/** A Caddy network address. */
export interface NetAddr {
  /** `tcp`, `udp`, `unix`, `fd`, ... ("" when not written). */
  network: string;
  /** Host, socket path or descriptor. */
  host: string;
  /** First port (0 when none). */
  startPort: number;
  /** Last port. */
  endPort: number;
  /** True when the address had a port. */
  hasPort: boolean;
}

const isUnixOrFd = (n: string) => n.startsWith("unix") || n.startsWith("fd");

/** Caddy's `SplitNetworkAddress`: network, host and port text of a listen address. */
export function splitNetworkAddress(a: string): [string, string, string] {
  let network = "";
  const slash = a.indexOf("/");
  if (slash >= 0) {
    network = a.slice(0, slash).trim().toLowerCase();
    a = a.slice(slash + 1);
    if (isUnixOrFd(network)) return [network, a, ""];
  }
  try {
    const [host, port] = splitHostPort(a);
    return [network, host, port];
  } catch (first) {
    try {
      const [host] = splitHostPort(joinHostPort(a.replace(/^\[+|\]+$/g, ""), "0"));
      return [network, host, ""];
    } catch {
      throw first;
    }
  }
}

/** Caddy's `JoinNetworkAddress`. */
export function joinNetworkAddress(network: string, host: string, port: string): string {
  let a = network !== "" ? `${network}/` : "";
  if ((host !== "" && port === "") || isUnixOrFd(network)) a += host;
  else if (port !== "") a += joinHostPort(host, port);
  return a;
}

/** Caddy's `ParseNetworkAddress` (default network `tcp`); throws on malformed input. */
export function parseNetAddr(addr: string): NetAddr {
  const [n, host, port] = splitNetworkAddress(addr);
  const network = n === "" ? "tcp" : n;
  if (isUnixOrFd(network)) return { network, host, startPort: 0, endPort: 0, hasPort: false };
  if (port === "") return { network, host, startPort: 0, endPort: 0, hasPort: false };
  const dash = port.indexOf("-");
  const before = dash < 0 ? port : port.slice(0, dash);
  const after = dash < 0 ? port : port.slice(dash + 1);
  const num = (s: string, what: string) => {
    if (!/^\d+$/.test(s) || Number(s) > 65535) {
      throw new Error(`invalid ${what} port: strconv.ParseUint: parsing "${s}": invalid syntax`);
    }
    return Number(s);
  };
  const startPort = num(before, "start"), endPort = num(after, "end");
  if (endPort < startPort) throw new Error("end port must not be less than start port");
  return { network, host, startPort, endPort, hasPort: true };
}

/** Caddy's `NetworkAddress.String` (the default `tcp` network is left out). */
export function formatNetAddr(na: NetAddr): string {
  const port = na.startPort === na.endPort ? String(na.startPort) : `${na.startPort}-${na.endPort}`;
  const network = na.network === "tcp" ? "" : na.network;
  return joinNetworkAddress(network, na.host, port);
}
