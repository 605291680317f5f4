/**
 * What a server asks of its listeners' connections, settled once from its config
 * (`http/server_options.ts`) and applied by the listener engines: HTTP timeouts and the request
 * head limit (node engine), the listener wrappers (node engine), TCP keep-alive (both engines,
 * `keepalive.ts`) and the HTTP versions a listener speaks (ALPN on TLS; cleartext HTTP/2 with
 * prior knowledge on the node engine).
 *
 * @module
 */
import type { ListenerWrapper } from "./wrapper.ts";

/** TCP keep-alive of accepted connections (Caddy's `keepalive_*`). */
export interface TcpKeepAlive {
  /** False: probes off (a negative `keepalive_interval`). */
  enabled: boolean;
  /** Idle time before the first probe (seconds). */
  idleS?: number;
  /** Time between probes (seconds). */
  intervalS?: number;
  /** Unanswered probes before the connection is dropped. */
  count?: number;
}

/** Connection-level options of one listener. */
export interface ConnectionOptions {
  /** `read_timeout`: whole request (head and body) from its first byte, ms; 0 = none. */
  readTimeoutMs: number;
  /** `read_header_timeout`: request head from its first byte, ms; 0 = `readTimeoutMs`. */
  readHeaderTimeoutMs: number;
  /** `write_timeout`: response from the end of the request head, ms; 0 = none. */
  writeTimeoutMs: number;
  /** `idle_timeout`: wait for the next request on a kept-alive connection, ms; 0 = none. */
  idleTimeoutMs: number;
  /** `max_header_bytes`: longest request head (bytes). */
  maxHeaderBytes: number;
  /** Listener wrappers that run before TLS, in order. */
  wrappers: ListenerWrapper[];
  /** TCP keep-alive; undefined leaves the system's setting. */
  keepalive?: TcpKeepAlive;
  /** TLS: the ALPN protocols offered (`h2`, `http/1.1`), in preference order. */
  alpn: string[];
  /** Cleartext: answer HTTP/2 with prior knowledge (`h2c`; the node engine reads it). */
  h2c?: boolean;
}

/** Caddy 2.6.2's defaults (Go's `MaxHeaderBytes`, Caddy's 5 minute idle timeout). */
export const DEFAULT_CONNECTION_OPTIONS: Readonly<ConnectionOptions> = Object.freeze({
  readTimeoutMs: 0,
  readHeaderTimeoutMs: 0,
  writeTimeoutMs: 0,
  idleTimeoutMs: 5 * 60_000,
  maxHeaderBytes: 1 << 20,
  wrappers: [],
  alpn: ["h2", "http/1.1"],
});
