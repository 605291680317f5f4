/**
 * What an `http` server can say about the TLS connection of a request. Deno.serve reports
 * nothing about the TLS session to the handler (no SNI, version, cipher suite, resumption or
 * ALPN result), so:
 * - `proto` (the ALPN protocol) is inferred: a request without a `Host` header came over
 *   HTTP/2 (`h2`; HTTP/2 clients send `:authority` and Deno does not turn it into `Host`),
 *   otherwise `http/1.1` (HTTP/1.1 requires `Host`). An HTTP/2 client that also sends `Host`
 *   is logged as `http/1.1`.
 * - `serverName` is the Host name (clients send SNI with the name they connect to), and ""
 *   when that name is an IP literal (clients never send SNI for IP addresses).
 * - `version`, `cipherSuite` and `resumed` are left unset (logged as 0, 0, false).
 *
 * @module
 */
import type { ServeInfo } from "../module/listener.ts";

function hostName(request: Request): string {
  let host = request.headers.get("host");
  if (host === null) {
    const url = request.url;
    const start = url.indexOf("://") + 3;
    const end = url.indexOf("/", start);
    host = url.slice(start, end < 0 ? url.length : end);
  }
  if (host.startsWith("[")) return "";
  const colon = host.lastIndexOf(":");
  const name = (colon >= 0 ? host.slice(0, colon) : host).toLowerCase().replace(/\.$/, "");
  return /^[0-9.]+$/.test(name) ? "" : name;
}

/**
 * Fills `info.tls` (when the listener terminates TLS) with what can be known; returns `info`.
 *
 * @example
 * ```ts
 * import { fillTlsState } from "./connection.ts";
 * const info = fillTlsState(new Request("https://localhost/"), {
 *   remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
 *   localAddress: "127.0.0.1:443",
 *   tls: {},
 * });
 * info.tls?.proto; // "h2"
 * ```
 */
export function fillTlsState(request: Request, info: ServeInfo): ServeInfo {
  const tls = info.tls;
  if (!tls) return info;
  tls.proto ??= request.headers.has("host") ? "http/1.1" : "h2";
  tls.serverName ??= hostName(request);
  return info;
}
