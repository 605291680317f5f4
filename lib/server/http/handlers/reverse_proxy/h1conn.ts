/**
 * Upstream connections of the HTTP/1.1 client: a byte connection (dialed by
 * upstream_dial.ts), a read buffer over it, and the watch kept on a pooled idle
 * connection: an upstream has nothing to say between responses, so any byte (or EOF) that
 * arrives while the connection sits in the pool ends it, and such bytes can never be read as
 * the answer to a later request.
 *
 * @module
 */
import type { Tunnel } from "../../../module/listener.ts";
import type { NameServer } from "./dial.ts";
import type { OpenSslContext, Renegotiation } from "./openssl_conn.ts";
import { type ByteConn, writeAll } from "./byte_conn.ts";

/** Bytes read from an upstream connection at a time by default. */
export const READ_BUFFER = 32 * 1024;

/** TLS settings for upstream connections. */
export interface UpstreamTls {
  /** Skip certificate verification. */
  insecure: boolean;
  /** SNI and verification name; defaults to the dial host. */
  serverName?: string;
  /** Trusted CA certificates (PEM) instead of the system's, when set. */
  ca?: string[];
  /**
   * `renegotiation`: `never` (the default, Deno's TLS client), or `once` / `freely`, served by
   * OpenSSL (openssl_conn.ts) through `openssl`, made on first use.
   */
  renegotiation?: Renegotiation;
  /** The OpenSSL context of `once` / `freely`, once made. */
  openssl?: OpenSslContext;
}

/** How upstream connections are dialed. */
export interface DialOptions {
  /** The local IP address to dial from (`local_address`); the system chooses when absent. */
  localAddress?: string;
  /** DNS servers for upstream names (`resolver.addresses`); the system's when absent. */
  resolvers?: NameServer[];
  /**
   * `dial_fallback_delay` (ms): race the other address family after this long (negative: one
   * address at a time); absent: the system's order, as Deno.connect takes it.
   */
  fallbackDelayMs?: number;
  /** Ports dialed without TLS although the transport has `tls` (`tls.except_ports`). */
  exceptPorts?: ReadonlySet<number>;
  /** Bytes read from an upstream connection at a time (`read_buffer_size`). */
  readBufferSize?: number;
  /** TCP keep-alive probe interval of upstream connections, seconds (`probe_interval`). */
  probeIntervalS?: number;
}

/** An upstream connection with its read buffer. */
export class Conn {
  /** Bytes read and not yet consumed (its own allocation: safe to hand out as a body). */
  buf: Uint8Array = new Uint8Array(0);
  /** True once closed. */
  closed = false;
  #scratch: Uint8Array;
  /** A read issued while the connection sat idle in the pool. */
  #pending: Promise<number | null> | null = null;
  #idle = false;
  /** Runs once when the connection closes (the pool counts connections per upstream). */
  onClose?: () => void;

  constructor(readonly conn: ByteConn, readBuffer: number = READ_BUFFER) {
    this.#scratch = new Uint8Array(readBuffer);
  }

  /** Reads more bytes into the buffer; false at EOF. */
  async fill(): Promise<boolean> {
    const pending = this.#pending;
    this.#pending = null;
    const n = await (pending ?? this.conn.read(this.#scratch));
    // A zero-byte read makes no progress: treat it as the end rather than read again.
    if (n === null || n === 0) return false;
    if (this.buf.length === 0) this.buf = this.#scratch.slice(0, n);
    else {
      const merged = new Uint8Array(this.buf.length + n);
      merged.set(this.buf);
      merged.set(this.#scratch.subarray(0, n), this.buf.length);
      this.buf = merged;
    }
    return true;
  }

  /** Takes `n` bytes off the front of the buffer. */
  take(n: number): Uint8Array {
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /**
   * Parks the connection: a read waits for what the upstream should not send; if anything
   * (or EOF, or an error) comes while it is parked, the connection closes and `onDead` runs.
   */
  park(onDead: () => void): void {
    this.#idle = true;
    const p = this.conn.read(this.#scratch).catch(() => null);
    this.#pending = p;
    p.then(() => {
      if (this.#idle && this.#pending === p) {
        this.close();
        onDead();
      }
    });
  }

  /** Takes the connection out of the pool; false when it died there. */
  unpark(): boolean {
    this.#idle = false;
    this.reused = true;
    return !this.closed;
  }

  /** True once the connection came back from the pool for another exchange. */
  reused = false;

  /** Closes the connection (idempotent). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.conn.close();
    } catch { /* closed */ }
    this.onClose?.();
  }
}

/** An upstream connection that left HTTP (after 101), bytes already read first. */
export function connTunnel(c: Conn): Tunnel {
  return {
    readable: new ReadableStream<Uint8Array>({
      async pull(ctl) {
        try {
          if (!c.buf.length && !(await c.fill())) {
            ctl.close();
            return;
          }
          ctl.enqueue(c.take(c.buf.length));
        } catch (e) {
          ctl.error(e);
        }
      },
      cancel() {
        c.close();
      },
    }),
    writable: new WritableStream<Uint8Array>({
      write: (chunk) => writeAll(c.conn, chunk),
      async close() {
        await c.conn.closeWrite().catch(() => {});
      },
      abort() {
        c.close();
      },
    }),
    close: () => c.close(),
  };
}
