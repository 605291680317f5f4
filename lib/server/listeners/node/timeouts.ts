/**
 * Server timeouts on the node listener engine, with Go's (and so Caddy's) meaning:
 *
 * - `read_header_timeout` (else `read_timeout`): from the first byte of a request to the end of
 *   its head; `read_timeout`: to the end of its body. Node's own checks (`headersTimeout`,
 *   `requestTimeout`, run every 100ms) answer `408 Request Timeout` and close.
 * - `write_timeout`: from the end of the request head to the end of the response; the
 *   connection is cut when it passes.
 * - `idle_timeout`: how long a kept-alive connection may wait for the first byte of its next
 *   request; then it is closed. (Node would add a second and announce `Keep-Alive: timeout=`;
 *   neither happens here.)
 * - `max_header_bytes`: a longer request head gets `431`.
 *
 * @module
 */
import type http from "node:http";
import type net from "node:net";
import type { ConnectionOptions } from "../../module/listener.ts";

/** How often node checks header and request timeouts (ms): the precision of both. */
export const TIMEOUT_CHECK_INTERVAL_MS = 100;

/** Sets a node HTTP server's limits from `c` (each new connection calls it: cheap). */
export function applyServerTimeouts(server: http.Server, c: ConnectionOptions): void {
  const s = server as http.Server & {
    connectionsCheckingInterval?: number;
    maxHeaderSize?: number;
  };
  s.headersTimeout = c.readHeaderTimeoutMs || c.readTimeoutMs;
  s.requestTimeout = c.readTimeoutMs;
  s.keepAliveTimeout = c.idleTimeoutMs;
  s.maxHeaderSize = c.maxHeaderBytes;
  s.connectionsCheckingInterval = TIMEOUT_CHECK_INTERVAL_MS;
}

/**
 * Arms the per-request timers: the write deadline now (the request head was just read), the
 * idle wait when the response is done.
 */
export function armRequestTimers(
  res: http.ServerResponse,
  socket: net.Socket,
  c: ConnectionOptions,
): void {
  // node announces its keep-alive time in a Keep-Alive header; Go (and Caddy) do not
  (res as unknown as { _keepAliveTimeout: number })._keepAliveTimeout = 0;
  socket.setTimeout(0); // a request is active: no idle wait
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (c.writeTimeoutMs > 0) {
    timer = setTimeout(() => {
      if (!res.writableFinished) socket.destroy();
    }, c.writeTimeoutMs);
  }
  res.on("close", () => {
    clearTimeout(timer);
    // replaces node's keep-alive timer (its time plus one second); the parser clears it when
    // the next request's first bytes arrive
    // when no pipelined request is waiting for the socket
    const next = (socket as unknown as { _httpMessage?: unknown })._httpMessage;
    if (c.idleTimeoutMs > 0 && !socket.destroyed && !next) socket.setTimeout(c.idleTimeoutMs);
  });
}
