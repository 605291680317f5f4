/**
 * The shape of a `deno` engine HTTPS listener: what it is given (address, the certificate
 * getter to ask, the handler) and what it gives back (its port, generations, shutdown), shared by
 * the listener with live certificates (`listener.ts`) and the one-certificate fallback
 * (`one_certificate.ts`).
 *
 * @module
 */
import type { CertificateGetter, ConnectionOptions, ConnHandler } from "../../module/listener.ts";

/** Options of a Deno-engine TLS listener. */
export interface DenoTlsOptions {
  /** Host to bind ("0.0.0.0", "::" or an address). */
  hostname: string;
  /** Port; 0 picks one (later generations reuse it). */
  port: number;
  /** The getter to ask now (the newest config's). */
  getter(): CertificateGetter;
  /** Answers one request. */
  handler: ConnHandler;
  /** The listen address reported to handlers. */
  localAddress: () => string;
  /** The connection options in force (timeouts, head limit), read at each new connection. */
  connection?: () => ConnectionOptions;
  /** Logs what happened (replacement, fallback). */
  log?(msg: string, fields?: Record<string, unknown>): void;
  /** The ALPN protocols to offer (default `h2`, `http/1.1`); a change replaces the listener. */
  alpn?(): string[];
  /**
   * Whether the routes may take connections over (WebSocket): such a listener is served by
   * Deno's listener-wide server (`serveHttpOnListener`), whose connections can be upgraded; a
   * change replaces the listener.
   */
  upgrades?(): boolean;
  /** Called when a listener generation (a new listening socket) opened. */
  onListener?(): void;
  /**
   * Other processes listen on the address too (worker processes, SO_REUSEPORT): a replaced
   * listener is not handed over (the handover steers the whole group of sockets).
   */
  shared?: boolean;
}

/** A running Deno-engine TLS listener. */
export interface DenoTlsServer {
  /** The bound port. */
  readonly port: number;
  /** Stops accepting; in-flight requests finish, idle connections close. */
  shutdown(): Promise<void>;
  /** Resolves when the listener and every connection it accepted are closed. */
  readonly finished: Promise<void>;
  /** Re-checks what the listener answers and replaces it when that changed. */
  certificatesChanged(): void;
  /** How many listener generations were opened (tests, logs). */
  readonly generations: number;
  /** `fixed` (one certificate held by the listener) or `resolver` (asked per server name). */
  readonly mode: "fixed" | "resolver";
  /** Connections open right now. */
  readonly connections: number;
}
