/**
 * Host and Origin checks of the admin endpoint (defence against DNS rebinding and cross-site
 * requests), as current Caddy does them: the Host header must name an allowed origin unless the
 * endpoint listens on all interfaces; requests a browser made must come from an allowed origin,
 * and with `enforce_origin` every request must.
 *
 * @module
 */
import { AdminError } from "../errors.ts";
import { isLoopback, isWildcard, joinHostPort, type NetworkAddress } from "../net/address.ts";

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
 * import { parseNetworkAddress } from "../net/address.ts";
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

/** Request headers only browsers send: their presence makes the Origin check mandatory. */
const BROWSER_HEADERS = ["origin", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-dest"];

/**
 * Checks a request; returns the origin to echo in `Access-Control-Allow-Origin` (or
 * undefined), throws a 403 AdminError when refused. As current Caddy does:
 * - WebSocket upgrades, `Sec-Fetch-Mode: no-cors` (a page switching off the same-origin
 *   policy) and `Origin: null` are always refused;
 * - the Host header must be an allowed origin's host unless the endpoint listens on all
 *   interfaces or a unix socket (DNS rebinding);
 * - a request a browser made (it carries `Origin` or a `Sec-Fetch-*` header) must come from an
 *   allowed origin (its `Origin`, or `Referer` when there is none), whatever `enforce_origin`
 *   says; with `enforce_origin` every request must.
 *
 * @example
 * ```ts
 * import { adminSecurity, checkAdminRequest } from "./security.ts";
 * import { parseNetworkAddress } from "../net/address.ts";
 * const sec = adminSecurity(parseNetworkAddress("localhost:2019"), 2019, {});
 * const req = new Request("http://localhost:2019/config/", {
 *   headers: { host: "localhost:2019", origin: "http://localhost:2019" },
 * });
 * checkAdminRequest(req, sec); // "http://localhost:2019"
 * ```
 */
export function checkAdminRequest(req: Request, sec: AdminSecurity): string | undefined {
  const h = req.headers;
  if ((h.get("upgrade") ?? "").toLowerCase().includes("websocket")) {
    throw new AdminError("forbidden", "websocket connections aren't allowed");
  }
  if ((h.get("sec-fetch-mode") ?? "").toLowerCase().includes("no-cors")) {
    throw new AdminError(
      "forbidden",
      "client attempted to make request by disabling same-origin policy using no-cors mode",
    );
  }
  if (h.get("origin") === "null") {
    throw new AdminError("forbidden", "invalid origin 'null'");
  }
  if (sec.enforceHost) {
    const host = h.get("host") ?? "";
    if (!sec.allowed.some((a) => a.host === host)) {
      throw new AdminError("forbidden", `host not allowed: ${host}`);
    }
    // An absolute-form target names its own host, which wins over the Host header (RFC 9112
    // 3.2.2; what Go, and so Caddy, checks): it must be allowed too.
    const target = new URL(req.url).host;
    if (target !== host.toLowerCase() && !sec.allowed.some((a) => a.host === target)) {
      throw new AdminError("forbidden", `host not allowed: ${target}`);
    }
  }
  if (!sec.enforceOrigin && !BROWSER_HEADERS.some((name) => h.has(name))) return undefined;
  const raw = h.get("origin") || h.get("referer") || "";
  const refused = () =>
    new AdminError("forbidden", `client is not allowed to access from origin '${raw}'`);
  const origin = parseOrigin(raw);
  if (!origin) throw new AdminError("forbidden", "required Origin header is missing or invalid");
  const ok = sec.allowed.some((a) =>
    (!a.scheme || a.scheme === origin.scheme) && a.host === origin.host
  );
  if (!ok) throw refused();
  return origin.scheme ? `${origin.scheme}://${origin.host}` : raw;
}

/**
 * Splits an Origin or Referer value into scheme and host the way Go's `url.Parse` does (what
 * Caddy compares): no normalisation, so hosts are compared exactly as sent. Text without a
 * scheme (the empty string) has an empty host; control characters and spaces make it invalid.
 */
function parseOrigin(raw: string): { scheme: string; host: string } | null {
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u0020\u007f]/.test(raw)) return null;
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)/.exec(raw);
  if (!m) return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(raw) ? null : { scheme: "", host: "" };
  const authority = m[2];
  return { scheme: m[1].toLowerCase(), host: authority.slice(authority.lastIndexOf("@") + 1) };
}
