/**
 * Upstream addresses as `reverse_proxy` reads them in a Gatehousefile: `host:port`,
 * `scheme://host:port` (scheme sets the transport), port ranges (`:8000-8002` → three
 * upstreams), unix sockets, and placeholders.
 *
 * @module
 */
import {
  joinHostPort,
  joinNetworkAddress,
  parseNetAddr,
  splitNetworkAddress,
} from "../../../caddyfile/netaddr.ts";

/** A parsed upstream address. */
export interface UpstreamAddress {
  /** Network (`unix`, ...) or "". */
  network: string;
  /** `http`, `https`, `h2c` or "". */
  scheme: string;
  /** Host. */
  host: string;
  /** Port, port range or placeholder. */
  port: string;
}

/** The dial address of a parsed upstream. */
export function dialAddress(p: UpstreamAddress): string {
  if (p.network !== "") return joinNetworkAddress(p.network, p.host, p.port);
  if (p.port === "" && p.host.includes("{")) return p.host;
  return joinHostPort(p.host, p.port);
}

/** Minimal `scheme://[user@]host[:port][/path][?query][#fragment]` split (Go's url.Parse). */
function parseURL(s: string): { scheme: string; hostname: string; port: string; rest: string } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/.exec(s);
  if (!m) throw new Error(`parse ${JSON.stringify(s)}: missing protocol scheme`);
  const authority = m[2].slice(m[2].lastIndexOf("@") + 1);
  let hostname = authority, port = "";
  if (authority.startsWith("[")) {
    const end = authority.indexOf("]");
    if (end < 0) throw new Error(`parse ${JSON.stringify(s)}: missing ']' in host`);
    hostname = authority.slice(1, end);
    const after = authority.slice(end + 1);
    if (after.startsWith(":")) port = after.slice(1);
    else if (after !== "") throw new Error(`parse ${JSON.stringify(s)}: invalid port`);
  } else {
    const colon = authority.lastIndexOf(":");
    if (colon >= 0) {
      hostname = authority.slice(0, colon);
      port = authority.slice(colon + 1);
    }
  }
  if (port !== "" && !/^\d+$/.test(port)) {
    throw new Error(
      `parse ${JSON.stringify(s)}: invalid port ${JSON.stringify(":" + port)} after host`,
    );
  }
  return { scheme: m[1].toLowerCase(), hostname, port, rest: m[3] };
}

/** Parses an upstream address; throws with Caddy's messages. */
export function parseUpstreamAddress(addr: string): UpstreamAddress {
  let network = "", scheme = "", host = "", port = "";
  if (addr.includes("://")) {
    if (addr.includes("{")) {
      throw new Error(
        "due to parsing difficulties, placeholders are not allowed when an upstream address contains a scheme",
      );
    }
    let u: ReturnType<typeof parseURL>;
    try {
      u = parseURL(addr);
    } catch (e) {
      const msg = (e as Error).message;
      if (msg.includes("invalid port") && msg.includes("-")) {
        const idx = addr.lastIndexOf(":");
        const range = addr.slice(idx + 1);
        if (range.split("-").length !== 2) {
          throw new Error(
            `parsing upstream URL: parse "${addr}": port range invalid: ${range}`,
          );
        }
        u = parseURL(addr.replaceAll(range, "0"));
        port = range;
      } else throw new Error(`parsing upstream URL: ${msg}`);
    }
    if (port === "") port = u.port;
    if (u.rest !== "") {
      throw new Error(
        "for now, URLs for proxy upstreams only support scheme, host, and port components",
      );
    }
    if (u.scheme === "http" && port === "443") {
      throw new Error(
        "upstream address has conflicting scheme (http://) and port (:443, the HTTPS port)",
      );
    }
    if (u.scheme === "https" && port === "80") {
      throw new Error(
        "upstream address has conflicting scheme (https://) and port (:80, the HTTP port)",
      );
    }
    if (u.scheme === "h2c" && port === "443") {
      throw new Error(
        "upstream address has conflicting scheme (h2c://) and port (:443, the HTTPS port)",
      );
    }
    if (port === "") {
      if (u.scheme === "" || u.scheme === "http" || u.scheme === "h2c") port = "80";
      else if (u.scheme === "https") port = "443";
    }
    scheme = u.scheme;
    host = u.hostname;
  } else {
    try {
      [network, host, port] = splitNetworkAddress(addr);
    } catch {
      host = addr;
    }
    if (
      port === "" && !host.includes("{") && !network.startsWith("unix") &&
      !network.startsWith("fd")
    ) port = "80";
  }
  if (network === "unix+h2c") {
    network = "unix";
    scheme = "h2c";
  }
  return { network, scheme, host, port };
}

/** The dial addresses one upstream address stands for (a port range gives several). */
export function expandUpstream(p: UpstreamAddress): string[] {
  if (p.port.includes("{") && p.port.includes("}")) return [dialAddress(p)];
  const parsed = parseNetAddr(dialAddress(p));
  if (p.network.startsWith("unix") || !p.port.includes("-")) return [dialAddress(p)];
  const out: string[] = [];
  for (let i = parsed.startPort; i <= parsed.endPort; i++) {
    out.push(joinNetworkAddress("", parsed.host, String(i)));
  }
  return out;
}
