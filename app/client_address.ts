/**
 * The client's address for throttling: the connection's remote address, or — when the
 * connection comes from a proxy listed in `TRUSTED_PROXIES` — the address that proxy put in
 * `X-Forwarded-For` (the rightmost entry that is not itself a trusted proxy). A header from
 * anyone else is ignored, so a client cannot choose its own address.
 *
 * @module
 */
import type { AppEnv } from "./env.ts";
import { ipInRanges, type IPRange, parseIP, parseRange } from "../mail.ts";

/** What `Deno.serve` passes a handler about the connection. */
export interface ConnectionInfo {
  /** The peer's address. */
  remoteAddr: { hostname: string } | { transport: string };
}

/**
 * A function giving the client address of a request, per the app's `TRUSTED_PROXIES`
 * (comma-separated addresses or CIDR ranges; default none). Throws, naming the entry, when
 * one is neither.
 *
 * @example
 * ```ts
 * import { loadAppEnv } from "./env.ts";
 * import { clientAddress } from "./client_address.ts";
 * const of = clientAddress(loadAppEnv({ TRUSTED_PROXIES: "127.0.0.1" }));
 * const req = new Request("http://x/", { headers: { "x-forwarded-for": "203.0.113.9" } });
 * console.log(of(req, { remoteAddr: { hostname: "127.0.0.1" } })); // "203.0.113.9"
 * ```
 */
export function clientAddress(
  env: AppEnv,
): (request: Request, info: ConnectionInfo | undefined) => string | undefined {
  const ranges = trustedRanges(env.vars.TRUSTED_PROXIES ?? "");
  const trusted = (address: string) => {
    const ip = parseIP(address);
    return ip !== null && ipInRanges(ip, ranges);
  };
  return (request, info) => {
    const peer = info?.remoteAddr && "hostname" in info.remoteAddr
      ? info.remoteAddr.hostname.toLowerCase()
      : undefined;
    if (!peer || ranges.length === 0 || !trusted(peer)) return peer;
    const hops = (request.headers.get("x-forwarded-for") ?? "").split(",").map((s) =>
      s.trim().toLowerCase()
    ).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!trusted(hops[i])) return hops[i];
    return peer;
  };
}

/** The `TRUSTED_PROXIES` entries (addresses or CIDR ranges); throws naming a bad one. */
function trustedRanges(list: string): IPRange[] {
  const out: IPRange[] = [];
  for (const entry of list.split(",").map((s) => s.trim()).filter(Boolean)) {
    try {
      out.push(parseRange(entry));
    } catch {
      throw new Error(
        `TRUSTED_PROXIES: ${JSON.stringify(entry)} is not an IP address or CIDR range ` +
          "(e.g. 127.0.0.1, 10.0.0.0/8, ::1)",
      );
    }
  }
  return out;
}
