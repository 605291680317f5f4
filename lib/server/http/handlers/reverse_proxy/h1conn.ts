/**
 * Upstream connections of the HTTP/1.1 client: a byte connection (a `Deno.Conn` for plain
 * TCP and unix sockets, a `node:tls` socket for TLS upstreams so that `insecure_skip_verify`
 * and `server_name` work), a read buffer over it, and the watch kept on a pooled idle
 * connection: an upstream has nothing to say between responses, so any byte (or EOF) that
 * arrives while the connection sits in the pool ends it, and such bytes can never be read as
 * the answer to a later request.
 *
 * @module
 */
import type tls from "node:tls";
import type net from "node:net";
import type { Tunnel } from "../../../module.ts";
import { view } from "../../../node_streams.ts";
import { DialError } from "./transport.ts";
import { splitDial } from "./upstreams.ts";
import { dialParallel, isIPLiteral, type NameServer, resolveHost } from "./dial.ts";
import { applyConnectionKeepAlive } from "../../../listeners/keepalive.ts";

const READ_BUFFER = 32 * 1024;

/** What the client needs of a connection (a `Deno.Conn` has it all). */
export interface ByteConn {
  /** Reads into `p`; null at EOF. */
  read(p: Uint8Array): Promise<number | null>;
  /** Writes some of `p`; the number of bytes written. */
  write(p: Uint8Array): Promise<number>;
  /** Half-closes the write side. */
  closeWrite(): Promise<void>;
  /** Closes the connection. */
  close(): void;
}

/** TLS settings for upstream connections. */
export interface UpstreamTls {
  /** Skip certificate verification. */
  insecure: boolean;
  /** SNI and verification name; defaults to the dial host. */
  serverName?: string;
  /** Trusted CA certificates (PEM) instead of the system's, when set. */
  ca?: string[];
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

/** Writes all of `data`. */
export async function writeAll(c: ByteConn, data: Uint8Array): Promise<void> {
  let off = 0;
  while (off < data.length) off += await c.write(data.subarray(off));
}

/** A node socket as a `ByteConn`, paused while unread bytes pile up. */
class NodeSocketConn implements ByteConn {
  #queue: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  #error: Error | null = null;
  #wake: (() => void) | null = null;

  constructor(readonly socket: tls.TLSSocket | net.Socket) {
    const wake = () => {
      const w = this.#wake;
      this.#wake = null;
      w?.();
    };
    socket.on("data", (d: Uint8Array) => {
      this.#queue.push(view(d));
      this.#queued += d.byteLength;
      if (this.#queued > 4 * READ_BUFFER) socket.pause();
      wake();
    });
    socket.on("end", () => {
      this.#ended = true;
      wake();
    });
    socket.on("close", () => {
      this.#ended = true;
      wake();
    });
    socket.on("error", (e: Error) => {
      this.#error = e;
      wake();
    });
  }

  async read(p: Uint8Array): Promise<number | null> {
    while (this.#queue.length === 0) {
      if (this.#error) throw this.#error;
      if (this.#ended) return null;
      await new Promise<void>((r) => (this.#wake = r));
    }
    const head = this.#queue[0];
    const n = Math.min(p.length, head.length);
    p.set(head.subarray(0, n));
    if (n === head.length) this.#queue.shift();
    else this.#queue[0] = head.subarray(n);
    this.#queued -= n;
    if (this.#queued <= READ_BUFFER && this.socket.isPaused()) this.socket.resume();
    return n;
  }

  write(p: Uint8Array): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed) return reject(new Error("connection closed"));
      this.socket.write(p, (e) => (e ? reject(e) : resolve(p.length)));
    });
  }

  closeWrite(): Promise<void> {
    return new Promise((resolve) => this.socket.end(() => resolve()));
  }

  close(): void {
    this.#ended = true;
    this.socket.destroy();
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }
}

let nodeTls: typeof tls | undefined;
let nodeNet: typeof net | undefined;

/** A plain TCP connection from a chosen local address (Deno.connect cannot bind one). */
async function connectFrom(host: string, port: number, localAddress: string): Promise<ByteConn> {
  nodeNet ??= (await import("node:net")).default;
  const n = nodeNet;
  return await new Promise<ByteConn>((resolve, reject) => {
    const socket = n.connect({ host, port, localAddress });
    socket.setNoDelay(true);
    const fail = (e: Error) => reject(e);
    socket.once("error", fail);
    socket.once("connect", () => {
      socket.off("error", fail);
      resolve(new NodeSocketConn(socket));
    });
  });
}

async function connectTls(
  host: string,
  port: number,
  o: UpstreamTls,
  localAddress?: string,
): Promise<ByteConn> {
  nodeTls ??= (await import("node:tls")).default;
  const t = nodeTls;
  return await new Promise<ByteConn>((resolve, reject) => {
    const socket = t.connect({
      host,
      port,
      servername: o.serverName ?? (/^[\d.]+$|:/.test(host) ? undefined : host),
      rejectUnauthorized: !o.insecure,
      ALPNProtocols: ["http/1.1"],
      ...(o.ca ? { ca: o.ca } : {}),
      ...(localAddress ? { localAddress } : {}),
    });
    socket.setNoDelay(true);
    const fail = (e: Error) => reject(e);
    socket.once("error", fail);
    socket.once("secureConnect", () => {
      socket.off("error", fail);
      resolve(new NodeSocketConn(socket));
    });
  });
}

/**
 * Connects to a dial address (`host:port` or `unix//path`), with TLS when `tls` is given;
 * failures and `timeout` (ms, 0 = none) are `DialError`s.
 */
export async function dialUpstream(
  dial: string,
  timeout: number,
  tls: UpstreamTls | null,
  options: DialOptions = {},
): Promise<ByteConn> {
  let connecting: Promise<ByteConn>;
  if (dial.startsWith("unix/")) {
    connecting = Deno.connect({ transport: "unix", path: dial.slice(5) });
  } else {
    const { host, port } = splitDial(dial);
    const p = port ? Number(port) : tls ? 443 : 80;
    if (tls && options.exceptPorts?.has(p)) tls = null;
    const from = options.localAddress;
    const to = (ip: string): Promise<ByteConn> => {
      // an address looked up here keeps the name for TLS (SNI and verification)
      const t = tls && ip !== host && !tls.serverName ? { ...tls, serverName: host } : tls;
      return t ? connectTls(ip, p, t, from) : from ? connectFrom(ip, p, from) : Deno.connect({
        hostname: ip,
        port: p,
      }).then((c) => {
        c.setNoDelay(true);
        return c;
      });
    };
    connecting = isIPLiteral(host) ||
        (options.resolvers === undefined && options.fallbackDelayMs === undefined)
      ? to(host)
      : resolveHost(host, options.resolvers).then((addrs) =>
        dialParallel(
          addrs,
          options.fallbackDelayMs ?? 300,
          (a) => to(a.address),
          (ms) => new Promise((r) => setTimeout(r, ms)),
          (c) => c.close(),
        )
      );
    if (options.probeIntervalS) {
      const s = options.probeIntervalS;
      connecting = connecting.then((c) => {
        keepAliveOn(c, s);
        return c;
      });
    }
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return timeout > 0
      ? await Promise.race([
        connecting,
        new Promise<never>((_, rej) => {
          timer = setTimeout(() => {
            connecting.then((c) => c.close(), () => {});
            rej(new DialError(`dial ${dial}: timeout`));
          }, timeout);
        }),
      ])
      : await connecting;
  } catch (e) {
    if (e instanceof DialError) throw e;
    throw new DialError(`dial ${dial}: ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

/** TCP keep-alive probes every `seconds` on an upstream connection (Go's Dialer.KeepAlive). */
function keepAliveOn(c: ByteConn, seconds: number): void {
  let ports: [number, number] | undefined;
  if (c instanceof NodeSocketConn) {
    const s = c.socket as net.Socket;
    s.setKeepAlive(true, seconds * 1000);
    if (s.localPort && s.remotePort) ports = [s.localPort, s.remotePort];
  } else {
    const d = c as Deno.TcpConn;
    d.setKeepAlive?.(true);
    const l = d.localAddr as Deno.NetAddr, r = d.remoteAddr as Deno.NetAddr;
    if (l?.port && r?.port) ports = [l.port, r.port];
  }
  if (ports) applyConnectionKeepAlive(ports[0], ports[1], seconds);
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
