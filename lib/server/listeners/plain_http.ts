/**
 * Plain HTTP sent to an HTTPS port: answered as Go's `net/http` (and so Caddy 2.6.2) answers
 * it, `HTTP/1.0 400 Bad Request` with the body `Client sent an HTTP request to an HTTPS
 * server.`, then the connection is closed. A connection is taken for plain HTTP, as in Go, when
 * its first 5 bytes (the length of a TLS record header) are `GET /`, `HEAD `, `POST `, `PUT /`
 * or `OPTIO`; anything else goes to the TLS handshake, which refuses what is not TLS.
 *
 * The node engine reads those bytes from the accepted socket and puts them back before TLS
 * starts ({@linkcode firstBytes}, {@linkcode triage}; bytes that are no TLS record close the
 * connection there, as Go closes it); the deno engine peeks at them in the kernel
 * (`deno/plain_http_peek.ts`).
 *
 * @module
 */
import type net from "node:net";

/** What Go writes to a client that sent plain HTTP to a TLS listener, byte for byte. */
export const PLAIN_HTTP_ANSWER: Uint8Array = new TextEncoder().encode(
  "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n",
);

/** How many first bytes decide (a TLS record header's length, as Go reads). */
export const PLAIN_HTTP_PREFIX = 5;

const STARTS = ["GET /", "HEAD ", "POST ", "PUT /", "OPTIO"].map((s) =>
  Array.from(s, (ch) => ch.charCodeAt(0))
);

/**
 * Whether the first bytes of a connection are plain HTTP as Go tells it (`looksLikeHTTP` of
 * `crypto/tls`): one of five 5-byte starts; fewer than 5 bytes are not.
 *
 * @example
 * ```ts
 * import { looksLikeHttp } from "./plain_http.ts";
 * looksLikeHttp(new TextEncoder().encode("GET / HTTP/1.1")); // true
 * looksLikeHttp(new Uint8Array([0x16, 3, 1, 0, 0xa5])); // false: a TLS handshake record
 * ```
 */
export function looksLikeHttp(first: Uint8Array): boolean {
  if (first.length < PLAIN_HTTP_PREFIX) return false;
  return STARTS.some((s) => s.every((b, i) => first[i] === b));
}

/**
 * The bytes an accepted socket has received so far, once there are at least `n`: read and put
 * back (`unshift`, as one chunk) so that the TLS server that takes the socket next reads them
 * still; null when the socket ends before, or after `waitMs` without them (the TLS handshake
 * then has its own timeouts).
 */
export function firstBytes(
  socket: net.Socket,
  n: number,
  waitMs: number,
): Promise<Uint8Array | null> {
  return new Promise((resolve) => {
    const finish = (got: Uint8Array | null) => {
      clearTimeout(timer);
      socket.off("readable", check);
      socket.off("end", none);
      socket.off("close", none);
      resolve(got);
    };
    const check = () => {
      if (socket.readableLength < n) {
        socket.read(0); // ask for more
        return;
      }
      // all that is buffered, as one chunk: Deno's TLS wrap feeds the buffered chunks to the
      // handshake one by one, and reads on after a first chunk that failed it
      const chunk = socket.read() as Uint8Array | null;
      if (!chunk) return;
      socket.unshift(chunk);
      finish(new Uint8Array(chunk));
    };
    const none = () => finish(null);
    const timer = setTimeout(none, waitMs);
    socket.on("readable", check);
    socket.once("end", none);
    socket.once("close", none);
  });
}

/** The first byte of a TLS handshake record (a ClientHello starts with one). */
const TLS_HANDSHAKE = 0x16;

/** How long the node engine waits for a connection's first bytes before TLS takes it anyway. */
export const FIRST_BYTES_WAIT_MS = 10_000;

/**
 * What to do with a node socket from its first bytes: `"answered"` (plain HTTP: Go's 400 is
 * written and the socket ended), `"closed"` (not a TLS handshake record: closed, as Go closes
 * a connection whose first record is not TLS), `"tls"` (handed on untouched).
 */
export function triage(
  socket: net.Socket,
  first: Uint8Array | null,
): "answered" | "closed" | "tls" {
  if (first && looksLikeHttp(first)) {
    socket.on("error", () => {});
    socket.resume(); // the rest of the request is read and dropped: the close is a FIN, no reset
    socket.end(PLAIN_HTTP_ANSWER);
    return "answered";
  }
  if (first && first[0] !== TLS_HANDSHAKE) {
    socket.destroy();
    return "closed";
  }
  return "tls";
}
