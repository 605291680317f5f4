/**
 * `caddy.listeners.http_redirect`: on a port that serves HTTPS, a connection whose first bytes
 * are a plain HTTP request (`GET /`, `HEAD `, `POST `, `PUT /`, `OPTIO`) instead of a TLS
 * handshake gets `308 Permanent Redirect` to the same host and target over `https://`, and is
 * closed — as Caddy's wrapper does. Anything else goes on to TLS untouched. `max_header_bytes`
 * (default 1 MiB) bounds the request head it reads; a longer head closes the connection.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder, type Raw } from "../../config/decode.ts";
import { validHost } from "../../net/host.ts";
import type { ListenerWrapper, PendingConnection } from "../../module/listener.ts";

const WHERE = "caddy.listeners.http_redirect";
const LOOKS_LIKE_HTTP = ["GET /", "HEAD ", "POST ", "PUT /", "OPTIO"];

/** True when the first five bytes are a plain HTTP request line's start. */
export function looksLikeHttp(first: Uint8Array): boolean {
  if (first.length < 5) return false;
  const s = String.fromCharCode(first[0], first[1], first[2], first[3], first[4]);
  return LOOKS_LIKE_HTTP.includes(s);
}

function headEnd(buf: Uint8Array): number {
  for (let i = 0; i + 1 < buf.length; i++) {
    if (buf[i] !== 0x0a) continue;
    if (buf[i + 1] === 0x0a) return i + 2;
    if (buf[i + 1] === 0x0d && i + 2 < buf.length && buf[i + 2] === 0x0a) return i + 3;
  }
  return -1;
}

const ASCII = new TextEncoder();

function answer(status: string, location?: string): Uint8Array {
  const loc = location === undefined ? "" : `Location: ${location}\r\n`;
  return ASCII.encode(
    `HTTP/1.0 ${status}\r\n${loc}Content-Length: 0\r\nConnection: close\r\n\r\n`,
  );
}

/**
 * The answer to a plain HTTP request head: a 308 to `https://<host><target>`, or 400 when the
 * head has no usable request line or Host.
 *
 * @example
 * ```ts
 * import { redirectFor } from "./http_redirect.ts";
 * const head = new TextEncoder().encode("GET /a?b HTTP/1.1\r\nHost: example.com:8443\r\n\r\n");
 * new TextDecoder().decode(redirectFor(head)).split("\r\n")[1]; // "Location: https://example.com:8443/a?b"
 * ```
 */
export function redirectFor(head: Uint8Array): Uint8Array {
  const text = new TextDecoder("latin1").decode(head);
  const lines = text.split(/\r?\n/);
  const parts = lines[0].split(" ");
  if (parts.length !== 3 || !/^HTTP\/1\.[01]$/.test(parts[2])) return answer("400 Bad Request");
  let target = parts[1];
  if (!/^[\x21-\x7e]+$/.test(target)) return answer("400 Bad Request");
  if (target === "*") target = "/";
  else if (!target.startsWith("/")) {
    try {
      const u = new URL(target);
      target = u.pathname + u.search;
    } catch {
      return answer("400 Bad Request");
    }
  }
  let host: string | undefined;
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0 && line.slice(0, colon).toLowerCase() === "host") {
      if (host !== undefined) return answer("400 Bad Request");
      host = line.slice(colon + 1).trim();
    }
  }
  if (host === undefined || !validHost(host)) return answer("400 Bad Request");
  return answer("308 Permanent Redirect", `https://${host}${target}`);
}

/** Decoded config: the longest request head read (bytes). */
export function parseHttpRedirectConfig(raw: Raw): { maxHeaderBytes: number } {
  const d = new Decoder(raw, WHERE).fields(["wrapper", "max_header_bytes"]);
  const max = d.number("max_header_bytes") ?? 0;
  if (!Number.isInteger(max) || max < 0) d.failAt("max_header_bytes", "must be a count of bytes");
  return { maxHeaderBytes: max === 0 ? 1 << 20 : max };
}

/** Handles one connection; true when it is not plain HTTP and goes on to TLS. */
export async function acceptRedirect(
  maxHeaderBytes: number,
  conn: PendingConnection,
): Promise<boolean> {
  while (conn.buffered.length < 5) {
    if ((await conn.fill()) !== "data") return false;
  }
  if (!looksLikeHttp(conn.buffered)) return true;
  while (true) {
    const end = headEnd(conn.buffered);
    if (end >= 0 && end <= maxHeaderBytes) {
      conn.answer(redirectFor(conn.buffered.subarray(0, end)));
      return false;
    }
    if (conn.buffered.length >= maxHeaderBytes) return false;
    if ((await conn.fill()) !== "data") return false;
  }
}

/** Registry entry. */
export const httpRedirectModule: ModuleDefinition<ListenerWrapper> = {
  id: "caddy.listeners.http_redirect",
  create(config) {
    const { maxHeaderBytes } = parseHttpRedirectConfig(config);
    return { name: "http_redirect", accept: (conn) => acceptRedirect(maxHeaderBytes, conn) };
  },
};
