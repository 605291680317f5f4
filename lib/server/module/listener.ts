/**
 * The listener contract: what a listener engine gives handlers about each request's connection
 * (`ServeInfo`, raw upgrades and tunnels), what a config asks of its listeners
 * (`ListenOptions`, `ConnectionOptions`: timeouts, head limit, wrappers, keep-alive, ALPN), where
 * a TLS listener gets its certificates (`TlsCertificateSource`), and the listener wrappers that
 * see a connection before TLS and HTTP (`ListenerWrapper`, `PendingConnection`).
 *
 * @module
 */
import type { ModuleInstance } from "./instance.ts";

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
  /**
   * Cleartext, deno engine: each connection's first bytes are looked at (in the kernel) for
   * the HTTP/2 preface, where the protocols make it matter: a listener that does not answer
   * h2c closes such a connection unanswered (as Caddy), one with `h2c` listed knows which of
   * its requests came over HTTP/2 (`{http.request.proto}`).
   */
  h2cPreface?: boolean;
  /**
   * False: HTTP/1.1 is not served (`protocols` without `h1`): a connection that does not start
   * HTTP/2 is closed (the node engine reads it). Undefined: served.
   */
  h1?: boolean;
  /**
   * The routes may take a connection over (WebSocket and other upgrades through
   * `reverse_proxy`). Deno's per-connection server cannot hand a connection over, so a
   * deno-engine TLS listener then serves with Deno's listener-wide server.
   */
  upgrades?: boolean;
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

/** The per-request or per-connection handler a listener dispatches to. */
export type ConnHandler = (request: Request, info: ServeInfo) => Response | Promise<Response>;

/** What a listener knows about one request's connection. */
export interface ServeInfo {
  /** Remote address: `{hostname, port}` for TCP and UDP (HTTP/3), `{path}` for unix sockets. */
  remoteAddr: { transport: "tcp" | "udp"; hostname: string; port: number } | {
    transport: "unix";
    path: string;
  };
  /** TLS state when the listener terminates TLS, else undefined. */
  tls?: {
    serverName?: string;
    version?: number;
    cipherSuite?: number;
    proto?: string;
    resumed?: boolean;
    /** The certificates the client sent (leaf first, DER), when it was asked for them. */
    clientCertificates?: Uint8Array[];
  };
  /** The local address the request arrived on, as a listen address string. */
  localAddress: string;
  /** Marks the request for the upgraded connection API (WebSocket); see Deno.upgradeWebSocket. */
  completed?: Promise<void>;
  /** True for a request that came over HTTP/2 (h2 or h2c), where the listener knows it (node engine). */
  http2?: boolean;
  /** True for a request that came over HTTP/3 (QUIC); `tls.proto` is then `h3`. */
  http3?: boolean;
  /**
   * HTTP/2 server push on this request's stream (node engine, HTTP/2, while the client accepts
   * pushes; absent otherwise and on pushed requests): sends a PUSH_PROMISE for a `GET` or
   * `HEAD` of `path` (an absolute path on the request's own origin, query included) with
   * `headers`, then serves that request through the listener's handler on the promised
   * stream. Resolves once the promise is sent; rejects when it cannot be (the client turned
   * push off, the stream is gone, too many streams open).
   */
  push?(method: "GET" | "HEAD", path: string, headers: Headers): Promise<void>;
  /**
   * Set for an HTTP/1.1 request with `Connection: Upgrade` on a `listener_engine: "node"`
   * listener: the connection can be taken over for any protocol (WebSocket, h2c, SPDY...).
   * A handler that calls `accept` answers with that, and the Response it returns is not sent.
   */
  upgrade?: RawUpgrade;
}

/** Bytes both ways over a connection that left HTTP (an accepted upgrade, an upstream tunnel). */
export interface Tunnel {
  /** Bytes from the peer; ends when the peer stops sending. */
  readonly readable: ReadableStream<Uint8Array>;
  /** Bytes to the peer; closing it ends the sending side only (half close). */
  readonly writable: WritableStream<Uint8Array>;
  /** Closes the connection both ways at once. */
  close(): void;
}

/** The connection of an upgrade request, for a handler to take over. */
export interface RawUpgrade {
  /** Whether `accept` was called. */
  readonly accepted: boolean;
  /** Status and header fields `accept` sent (for the access log). */
  readonly sent?: { status: number; headers: [string, string][] };
  /**
   * Writes the response head (`101 Switching Protocols` and `headers`) on the connection and
   * hands it over: the tunnel's `readable` starts with any bytes the client sent after its
   * request head.
   */
  accept(status: number, headers: [string, string][]): Tunnel;
}

/** Options for a listener acquired from the engine's listener pool. */
export interface ListenOptions {
  /**
   * Network address, Caddy form: `host:port`, `:port`, `unix//path`, `tcp/host:port`,
   * `fd/N`; `udp/host:port` and `fdgram/N` for HTTP/3 over QUIC (with `tls`).
   */
  address: string;
  /**
   * When the listener terminates TLS: where each handshake gets its certificate (by server
   * name). Listeners are keyed by address + TLS; a reload swaps the getter on the same socket.
   */
  tls?: TlsCertificateSource;
  /**
   * The HTTP implementation behind the socket: `deno` (`Deno.serve`: HTTP/1.1 and HTTP/2, the
   * fastest) or `node` (`node:http`/`node:http2`: HTTP/1.1 and HTTP/2, raw upgrades, TLS
   * session details, server push). Listeners are keyed by address + engine.
   */
  engine?: "deno" | "node";
  /**
   * Connection options (timeouts, head limit, listener wrappers, TCP keep-alive, ALPN); the
   * defaults when absent. A socket shared across configs follows its newest handle's.
   */
  connection?: ConnectionOptions;
  /**
   * TLS listeners: the host names the server's routes serve. An HTTP/3 listener (`udp/` and
   * `fdgram/` addresses), which can hold one certificate only, chooses it by them.
   */
  names?: readonly string[];
}

/** A certificate with its key, as a listener needs it. */
export interface CertifiedKey {
  /** PEM chain, leaf first. */
  cert: string;
  /** PEM private key. */
  key: string;
}

/** What a listener asks for each TLS handshake. */
export interface CertificateGetter {
  /**
   * The certificate for `serverName` (the SNI, lower case; `""` when the client sent none), or
   * null when there is none (the handshake then fails).
   */
  getCertificate(serverName: string): Promise<CertifiedKey | null>;
  /**
   * The certificate `getCertificate` would give from what is held now, never obtaining one
   * (no on-demand permission check or issuance, no external certificate manager): for
   * listeners that choose a certificate ahead of any handshake (HTTP/3).
   */
  heldCertificate?(serverName: string): Promise<CertifiedKey | null>;
  /** Calls `fn` whenever a certificate was added, replaced or removed; returns an unsubscribe. */
  subscribe(fn: () => void): () => void;
  /**
   * The one certificate this getter gives for every server name it answers, when the answer
   * cannot depend on the name right now (exactly one certificate can be chosen, it covers every
   * host name the server's routes serve, and no name can get another one later: no on-demand
   * policy, nothing still being obtained); null when it depends on the name. A listener may
   * then hold it instead of asking per handshake (a name no certificate covers and no route
   * serves gets it too, instead of a failed handshake). Asked again after every change
   * announced to subscribers.
   */
  fixedCertificate?(): Promise<CertifiedKey | null>;
}

/**
 * Where a TLS listener gets the certificate of each handshake (the `tls` app's getter for one
 * server) and, when connection policies authenticate clients, how it checks them.
 */
export interface TlsCertificateSource extends CertificateGetter {
  /** True when some connection policy authenticates clients (listeners then ask for certificates). */
  requestsClientCertificates?: boolean;
  /** The client certificate check for a connection with this SNI, null for none. */
  clientAuth?(serverName: string): ClientCertificateCheck | null;
}

/** A connection policy's client authentication, as a listener runs it. */
export interface ClientCertificateCheck {
  /** Accepts (null) or refuses (the reason) the certificates a client sent, leaf first (DER). */
  check(chain: Uint8Array[]): Promise<string | null>;
}

/**
 * A listener from the engine's pool. Listeners are reference-counted by address: when a new
 * config asks for an address the running config already listens on, it gets the same socket,
 * and at swap time `setHandler` switches it over, so no connection is refused or dropped.
 */
export interface ListenerHandle {
  /** The address this listener is bound to, with the real port when `:0` was asked. */
  readonly address: string;
  /** The bound port (TCP only). */
  readonly port?: number;
  /** Routes this listener's requests to `handler` from now on. */
  setHandler(handler: ConnHandler): void;
  /** Drops this config's reference; the socket closes when no config holds it. */
  release(): Promise<void>;
  /** True when no other config holds the socket (it closes on `release`). */
  closesOnRelease?(): boolean;
  /**
   * HTTP/3 listeners: true when the certificate the QUIC endpoint holds covers `host` (a host
   * name or IP, with or without a port), i.e. when HTTP/3 can be advertised for it.
   */
  servesHttp3?(host: string): boolean;
}

/**
 * The HTTP version of a request as Caddy names it (`{http.request.proto}`, the access log's
 * `proto`): `HTTP/3.0`, `HTTP/2.0` or `HTTP/1.1`.
 *
 * @example
 * ```ts
 * import { requestProto } from "./listener.ts";
 * requestProto({ remoteAddr: { transport: "udp", hostname: "::1", port: 1 }, localAddress: ":443", http3: true }); // "HTTP/3.0"
 * ```
 */
export function requestProto(info: ServeInfo): "HTTP/3.0" | "HTTP/2.0" | "HTTP/1.1" {
  if (info.http3) return "HTTP/3.0";
  return info.http2 || info.tls?.proto === "h2" ? "HTTP/2.0" : "HTTP/1.1";
}

/**
 * The error a handler's answer body fails with to reset the request's stream (HTTP/2:
 * RST_STREAM) before any of the answer is sent: how the `deno` engine leaves a request it must
 * not answer unanswered (`Deno.serve` cannot close a connection from a request). Listeners do not
 * log it.
 */
export class StreamRefused extends Error {
  override name = "StreamRefused";
}

/** Where a connection comes from, as handlers will see it. */
export type PeerAddress = ServeInfo["remoteAddr"];

/** A connection before TLS and HTTP, as listener wrappers see it. */
export interface PendingConnection {
  /** The peer: the socket's, or what a wrapper (a PROXY header) replaced it with. */
  remote: PeerAddress;
  /** The socket's own peer address (never replaced). */
  readonly socketRemote: PeerAddress;
  /** Bytes received and not yet consumed. */
  readonly buffered: Uint8Array;
  /**
   * Waits for more bytes: `data` when some arrived, `eof` when the peer finished sending (or
   * the connection closed), `timeout` when `deadline` (a `performance.now()` time) passed.
   * `atMost` bounds how many bytes this read takes from the socket (a wrapper that must not
   * read past its header says how much of it can still follow); the listener may read fewer.
   */
  fill(deadline?: number, atMost?: number): Promise<"data" | "eof" | "timeout">;
  /** Drops the first `n` buffered bytes (a header a wrapper consumed). */
  consume(n: number): void;
  /** Writes `bytes` and closes the connection (a wrapper answering it itself). */
  answer(bytes: Uint8Array): void;
  /** Closes the connection at once. */
  close(): void;
}

/** A provisioned listener wrapper. */
export interface ListenerWrapper extends ModuleInstance {
  /** The wrapper's name (`proxy_protocol`, `http_redirect`, `tls`). */
  readonly name: string;
  /**
   * Runs on a new connection, before TLS. Resolves true to hand the connection on, false when
   * the wrapper answered or closed it.
   */
  accept(conn: PendingConnection): Promise<boolean>;
}
