/**
 * Checks a server makes before routing, for its connection fields: an HTTP/2 request on a
 * listener whose `protocols` leave HTTP/2 out (deno engine: its stream is reset unanswered), and
 * `strict_sni_host`.
 *
 * @module
 */
import { type ServeInfo, StreamRefused } from "../module/listener.ts";
import type { RequestContext } from "./context.ts";
import { HandlerError } from "./errors.ts";

/**
 * An HTTP/2 request on the deno engine: it carries no Host header (Deno turns `:authority` into
 * the URL only). An HTTP/1.0 request without Host looks the same but gets Deno's fallback URL
 * authority, `localhost:<port>`.
 */
export function isHttp2(request: Request, info: ServeInfo): boolean {
  if (request.headers.has("host")) return false;
  const port = info.localAddress.slice(info.localAddress.lastIndexOf(":") + 1);
  const url = request.url;
  const start = url.indexOf("://") + 3;
  return !url.startsWith(`localhost:${port}/`, start);
}

/**
 * The answer to an HTTP/2 request on a `deno` engine listener that must not speak HTTP/2: a
 * body that fails before anything is sent, so the request's stream is reset (RST_STREAM) with no
 * answer. Caddy closes such a connection (its listener sees the HTTP/2 preface); `Deno.serve`
 * gives no way to, and an answer sent over HTTP/2 would be one.
 */
export function refusedStream(): Response {
  return new Response(
    new ReadableStream({
      start(c) {
        c.error(new StreamRefused("HTTP/2 is not enabled on this listener"));
      },
    }),
    { status: 505 },
  );
}

/** Caddy's strict SNI check: the Host names the server name the TLS handshake asked for. */
export function sniMatches(c: RequestContext, info: ServeInfo): boolean {
  return (info.tls?.serverName ?? "").toLowerCase() === c.hostname.toLowerCase();
}

export function misdirected(c: RequestContext, info: ServeInfo): HandlerError {
  // the connection closes after the answer (Go's r.Close), so the client reconnects with SNI
  c.responseHeaders().set("connection", "close");
  return new HandlerError(
    421,
    `strict host matching: TLS ServerName (${info.tls?.serverName ?? ""}) and HTTP Host ` +
      `(${c.hostname}) values differ`,
    "strict_sni_host",
  );
}
