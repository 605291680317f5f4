/**
 * Host and Origin checks of the admin endpoint (defence against DNS rebinding and cross-site
 * requests), as Caddy does them: the Host header must name an allowed origin unless the
 * endpoint listens on all interfaces; with `enforce_origin` the Origin (or Referer) must too.
 *
 * @module
 */
import { AdminError } from "../errors.ts";
import { isLoopback, isWildcard, joinHostPort, type NetworkAddress } from "../address.ts";

/** What the admin handler enforces. */
export interface AdminSecurity {
  /** Check the Host header. */
  enforceHost: boolean;
  /** Check the Origin header. */
  enforceOrigin: boolean;
  /** Allowed origins: a host (`localhost:2019`) and optionally a scheme. */
  allowed: { scheme?: string; host: string }[];
}

/**
 * Computes the checks for an admin endpoint listening on `addr` (with the real `port`).
 * `origins` null/undefined → the listen address and, on loopback, `localhost`, `::1`,
 * `127.0.0.1` at that port; an empty list allows nothing.
 *
 * @example
 * ```ts
 * import { adminSecurity } from "./security.ts";
 * import { parseNetworkAddress } from "../address.ts";
 * adminSecurity(parseNetworkAddress("localhost:2019"), 2019, {});
 * ```
 */
export function adminSecurity(
  addr: NetworkAddress,
  port: number,
  opts: { origins?: string[] | null; enforce_origin?: boolean },
): AdminSecurity {
  const unix = addr.network.startsWith("unix");
  const set = new Set<string>(opts.origins ?? []);
  if (opts.origins === undefined || opts.origins === null) {
    if (isLoopback(addr) && !unix) {
      set.add(joinHostPort("localhost", port));
      set.add(joinHostPort("::1", port));
      set.add(joinHostPort("127.0.0.1", port));
    }
    if (unix) set.add("");
    else set.add(joinHostPort(addr.host, port));
  }
  const allowed: AdminSecurity["allowed"] = [];
  for (const o of set) {
    if (o.includes("://")) {
      try {
        const u = new URL(o);
        allowed.push({ scheme: u.protocol.replace(/:$/, ""), host: u.host });
      } catch { /* skip malformed */ }
    } else allowed.push({ host: o });
  }
  // A browser cannot reach a unix socket, so the Host check is moot there (clients such as
  // `curl --unix-socket` send `Host: localhost`).
  return {
    enforceHost: !isWildcard(addr) && !unix,
    enforceOrigin: opts.enforce_origin === true,
    allowed,
  };
}

/**
 * Checks a request; returns the origin to echo in `Access-Control-Allow-Origin` (or
 * undefined), throws a 403 AdminError when refused.
 */
export function checkAdminRequest(req: Request, sec: AdminSecurity): string | undefined {
  if ((req.headers.get("upgrade") ?? "").toLowerCase().includes("websocket")) {
    throw new AdminError("forbidden", "websocket connections aren't allowed");
  }
  if (sec.enforceHost) {
    const host = req.headers.get("host") ?? "";
    if (!sec.allowed.some((a) => a.host === host)) {
      throw new AdminError("forbidden", `host not allowed: ${host}`);
    }
  }
  if (!sec.enforceOrigin) return undefined;
  const raw = req.headers.get("origin") || req.headers.get("referer") || "";
  const refused = () =>
    new AdminError("forbidden", `client is not allowed to access from origin '${raw}'`);
  // like Go's url.Parse: text without a scheme (empty, "null") parses as a host-less URL
  if (!raw.includes("://")) {
    if (sec.allowed.some((a) => !a.scheme && a.host === "")) return raw;
    throw refused();
  }
  let origin: URL;
  try {
    origin = new URL(raw);
  } catch {
    throw new AdminError("forbidden", "required Origin header is missing or invalid");
  }
  const scheme = origin.protocol.replace(/:$/, "");
  const ok = sec.allowed.some((a) => (!a.scheme || a.scheme === scheme) && a.host === origin.host);
  if (!ok) throw refused();
  return `${origin.protocol}//${origin.host}`;
}
