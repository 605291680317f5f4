/**
 * The client's address for throttling: the connection's remote address, or — when the
 * connection comes from a proxy listed in `TRUSTED_PROXIES` — the address that proxy put in
 * `X-Forwarded-For` (the rightmost entry that is not itself a trusted proxy). A header from
 * anyone else is ignored, so a client cannot choose its own address.
 *
 * @module
 */
import type { AppEnv } from "./env.ts";

/** What `Deno.serve` passes a handler about the connection. */
export interface ConnectionInfo {
  /** The peer's address. */
  remoteAddr: { hostname: string } | { transport: string };
}

/**
 * A function giving the client address of a request, per the app's `TRUSTED_PROXIES`
 * (comma-separated addresses; default none).
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
  const trusted = new Set(
    (env.vars.TRUSTED_PROXIES ?? "").split(",").map((s) => s.trim().toLowerCase()).filter(Boolean),
  );
  return (request, info) => {
    const peer = info?.remoteAddr && "hostname" in info.remoteAddr
      ? info.remoteAddr.hostname.toLowerCase()
      : undefined;
    if (!peer || !trusted.has(peer)) return peer;
    const hops = (request.headers.get("x-forwarded-for") ?? "").split(",").map((s) =>
      s.trim().toLowerCase()
    ).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!trusted.has(hops[i])) return hops[i];
    return peer;
  };
}
