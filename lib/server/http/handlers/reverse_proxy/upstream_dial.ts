/**
 * Connecting to upstreams, for the HTTP/1.1 and HTTP/2 clients alike: a dial address
 * (`host:port` or `unix//path`) becomes a connection, honouring the transport's dialer fields
 * — `resolver` and `dial_fallback_delay` (dial.ts), `local_address`, `dial_timeout`,
 * `keep_alive.probe_interval` — the PROXY header first when given (`proxy_protocol`, before
 * any TLS), and its TLS: `node:tls` (Deno's TLS client) with the trust
 * pool, `server_name` and `insecure_skip_verify`, or OpenSSL (openssl_conn.ts) when
 * `renegotiation` is `once` or `freely`; ports in `tls.except_ports` are dialed without TLS.
 *
 * The HTTP/1.1 client reads a connection as a `ByteConn` (`dialUpstream`); the HTTP/2 client
 * hands a node stream to `node:http2` (`dialStream`), with the protocol the upstream chose by
 * ALPN.
 *
 * @module
 */
import type tls from "node:tls";
import type net from "node:net";
import type { Duplex } from "node:stream";
import { view } from "../../../listeners/node/streams.ts";
import { DialError } from "./transport.ts";
import { DIAL_NETWORKS, dialNetwork, splitDial } from "./upstreams.ts";
import { dialParallel, isIPLiteral, resolveHost } from "./dial.ts";
import { applyConnectionKeepAlive } from "../../../listeners/keepalive.ts";
import { type DialOptions, READ_BUFFER, type UpstreamTls } from "./h1conn.ts";
import { type ByteConn, writeAll } from "./byte_conn.ts";
import { OpenSslConn, OpenSslContext } from "./openssl_conn.ts";

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

/**
 * A `ByteConn` as a node stream (for `node:http2` over an OpenSSL connection): reads are
 * pulled as the stream wants them, writes go in order, `end` half-closes.
 */
function byteConnStream(c: ByteConn, DuplexClass: typeof Duplex): Duplex {
  const buf = new Uint8Array(READ_BUFFER);
  let reading = false;
  const d: Duplex = new DuplexClass({
    read() {
      if (reading) return;
      reading = true;
      (async () => {
        try {
          for (;;) {
            const n = await c.read(buf);
            if (n === null) {
              d.push(null);
              return;
            }
            if (!d.push(buf.slice(0, n))) return;
          }
        } catch (e) {
          d.destroy(e as Error);
        } finally {
          reading = false;
        }
      })();
    },
    write(chunk: Uint8Array, _enc, cb) {
      writeAll(c, chunk).then(() => cb(), (e) => cb(e));
    },
    final(cb) {
      c.closeWrite().then(() => cb(), (e) => cb(e));
    },
    destroy(err, cb) {
      c.close();
      cb(err);
    },
  });
  return d;
}

let nodeTls: typeof tls | undefined;
let nodeNet: typeof net | undefined;

/** What a dial made: a node socket, or a byte connection; and the protocol chosen by ALPN. */
type Dialed =
  | { socket: net.Socket | tls.TLSSocket; conn?: undefined; alpn: string }
  | { conn: ByteConn; socket?: undefined; alpn: string };

/** How to connect: a node socket (`node:http2`) or the fastest byte connection. */
type Shape = "node" | "bytes";

/** Writes `preface` (the PROXY header) first on a node socket once it is connected. */
function sendPreface(
  socket: net.Socket,
  preface: Uint8Array | undefined,
  done: () => void,
  fail: (e: Error) => void,
): void {
  if (!preface) return done();
  socket.write(preface, (e) => (e ? fail(e) : done()));
}

async function connectPlain(
  host: string,
  port: number,
  from: string | undefined,
  shape: Shape,
  preface?: Uint8Array,
): Promise<Dialed> {
  if (shape === "bytes" && !from) {
    // Deno.connect cannot bind a local address; it is the fastest otherwise
    const c = await Deno.connect({ hostname: host, port });
    c.setNoDelay(true);
    if (preface) {
      await writeAll(c, preface).catch((e) => {
        c.close();
        throw e;
      });
    }
    return { conn: c, alpn: "" };
  }
  nodeNet ??= (await import("node:net")).default;
  const n = nodeNet;
  return await new Promise<Dialed>((resolve, reject) => {
    const socket = n.connect({ host, port, ...(from ? { localAddress: from } : {}) });
    socket.setNoDelay(true);
    const fail = (e: Error) => {
      socket.destroy();
      reject(e);
    };
    socket.once("error", fail);
    socket.once("connect", () => {
      sendPreface(socket, preface, () => {
        socket.off("error", fail);
        resolve({ socket, alpn: "" });
      }, fail);
    });
  });
}

async function connectTls(
  host: string,
  port: number,
  o: UpstreamTls,
  { from, alpn, preface }: {
    /** The local address to dial from. */
    from: string | undefined;
    /** The protocols offered by ALPN. */
    alpn: string[];
    /** Bytes sent before the handshake (the PROXY protocol header). */
    preface?: Uint8Array;
  },
): Promise<Dialed> {
  const name = o.serverName ?? host;
  if (name === "" && !o.insecure) {
    // Go's TLS client refuses to verify without a name (Caddy's ReplaceAll gave "")
    throw new Error(
      "tls: server_name resolved to an empty name, and the certificate cannot be verified " +
        "without one (insecure_skip_verify is off)",
    );
  }
  if (o.openssl && (o.renegotiation === "once" || o.renegotiation === "freely")) {
    const carrier = await connectPlain(host, port, from, "bytes", preface);
    const tcp = carrier.conn ?? new NodeSocketConn(carrier.socket!);
    const c = await OpenSslConn.connect(tcp, o.openssl, name, alpn, o.renegotiation);
    return { conn: c, alpn: c.alpn };
  }
  // the PROXY header goes before the handshake, on the TCP connection TLS then runs over
  const carrier = preface
    ? (await connectPlain(host, port, from, "node", preface)).socket as net.Socket
    : undefined;
  nodeTls ??= (await import("node:tls")).default;
  const t = nodeTls;
  return await new Promise<Dialed>((resolve, reject) => {
    const socket = t.connect({
      ...(carrier ? { socket: carrier } : { host, port }),
      servername: isIPLiteral(name) ? undefined : name,
      rejectUnauthorized: !o.insecure,
      ALPNProtocols: alpn,
      ...(o.ca ? { ca: o.ca } : {}),
      ...(from && !carrier ? { localAddress: from } : {}),
    });
    socket.setNoDelay(true);
    const fail = (e: Error) => reject(e);
    socket.once("error", fail);
    socket.once("secureConnect", () => {
      socket.off("error", fail);
      resolve({ socket, alpn: socket.alpnProtocol || "" });
    });
  });
}

/** True when a dial to `dial` goes over TLS (`tls` set and the port not in `except_ports`). */
export function dialsTls(dial: string, tls: boolean, options: DialOptions = {}): boolean {
  if (!tls || dial.startsWith("unix/")) return false;
  const port = Number(splitDial(dial).port || 443);
  return !options.exceptPorts?.has(port);
}

/** One dial: where to, how long it may take, TLS, the dialer's fields and the shape wanted. */
interface DialRequest {
  /** `host:port` or `unix//path`. */
  address: string;
  /** ms; 0 = no limit. */
  timeout: number;
  /** TLS to the upstream, or null for plain text. */
  tls: UpstreamTls | null;
  /** The transport's dialer fields. */
  options: DialOptions;
  /** A node socket or the fastest byte connection. */
  shape: Shape;
  /** The protocols offered by ALPN. */
  alpn: string[];
  /** Bytes sent first on the connection, before TLS (the PROXY protocol header). */
  preface?: Uint8Array;
  /** This request's TLS server name, over the transport's (`RoundTrip.serverName`). */
  serverName?: string;
}

async function dial(
  { address, timeout, tls: tlsOptions, options, shape, alpn, preface, serverName }: DialRequest,
): Promise<Dialed> {
  let connecting: Promise<Dialed>;
  if (address.startsWith("unix/")) {
    const path = address.slice(5);
    if (shape === "bytes") {
      connecting = Deno.connect({ transport: "unix", path }).then(async (conn) => {
        if (preface) {
          await writeAll(conn, preface).catch((e) => {
            conn.close();
            throw e;
          });
        }
        return { conn, alpn: "" };
      });
    } else {
      nodeNet ??= (await import("node:net")).default;
      const n = nodeNet;
      connecting = new Promise<Dialed>((resolve, reject) => {
        const socket = n.connect({ path });
        const fail = (e: Error) => {
          socket.destroy();
          reject(e);
        };
        socket.once("error", fail);
        socket.once("connect", () => {
          sendPreface(socket, preface, () => {
            socket.off("error", fail);
            resolve({ socket, alpn: "" });
          }, fail);
        });
      });
    }
  } else {
    const { network, address: hostport } = dialNetwork(address);
    if (network !== "tcp" && network !== "tcp4" && network !== "tcp6") {
      throw new DialError(
        `dial ${address}: network ${network} is not supported (${DIAL_NETWORKS.join(", ")})`,
      );
    }
    // tcp4/ and tcp6/ dial that family only (Go's networks of the same names)
    const family = network === "tcp4" ? 4 : network === "tcp6" ? 6 : 0;
    const { host, port } = splitDial(hostport);
    if (family && isIPLiteral(host) && host.includes(":") !== (family === 6)) {
      throw new DialError(`dial ${address}: ${host} is not an IPv${family} address`);
    }
    const p = port ? Number(port) : tlsOptions ? 443 : 80;
    const t = dialsTls(address, tlsOptions !== null, options) ? tlsOptions : null;
    if (t && (t.renegotiation === "once" || t.renegotiation === "freely")) {
      // one OpenSSL context for the transport, made on its first TLS dial
      t.openssl ??= new OpenSslContext({ insecure: t.insecure, ca: t.ca });
    }
    const from = options.localAddress;
    const to = (ip: string): Promise<Dialed> => {
      // an address looked up here keeps the name for TLS (SNI and verification)
      const named = t && serverName !== undefined
        ? { ...t, serverName }
        : t && ip !== host && !t.serverName
        ? { ...t, serverName: host }
        : t;
      return named
        ? connectTls(ip, p, named, { from, alpn, preface })
        : connectPlain(ip, p, from, shape, preface);
    };
    connecting = isIPLiteral(host) ||
        (!family && options.resolvers === undefined && options.fallbackDelayMs === undefined)
      ? to(host)
      : resolveHost(host, options.resolvers).then((found) => {
        const addrs = family ? found.filter((a) => a.family === family) : found;
        if (!addrs.length) throw new Error(`no IPv${family} address for ${host}`);
        return dialParallel(
          addrs,
          options.fallbackDelayMs ?? 300,
          (a) => to(a.address),
          (ms) => new Promise((r) => setTimeout(r, ms)),
          (d) => d.socket ? d.socket.destroy() : d.conn!.close(),
        );
      });
    if (options.probeIntervalS) {
      const s = options.probeIntervalS;
      connecting = connecting.then((d) => {
        keepAliveOn(d, s);
        return d;
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
            connecting.then((d) => d.socket ? d.socket.destroy() : d.conn!.close(), () => {});
            rej(new DialError(`dial ${address}: timeout`));
          }, timeout);
        }),
      ])
      : await connecting;
  } catch (e) {
    if (e instanceof DialError) throw e;
    throw new DialError(`dial ${address}: ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Connects to a dial address (`host:port` or `unix//path`) for HTTP/1.1, with TLS when `tls`
 * is given (and the port is not excepted); failures and `timeout` (ms, 0 = none) are
 * `DialError`s.
 *
 * @example
 * ```ts ignore
 * const conn = await dialUpstream("127.0.0.1:8080", 3000, null);
 * ```
 */
export async function dialUpstream(
  address: string,
  timeout: number,
  tls: UpstreamTls | null,
  options: DialOptions = {},
  send: { preface?: Uint8Array; serverName?: string } = {},
): Promise<ByteConn> {
  const { preface, serverName } = send;
  const d = await dial({
    address,
    timeout,
    tls,
    options,
    shape: "bytes",
    alpn: ["http/1.1"],
    preface,
    serverName,
  });
  return d.conn ?? new NodeSocketConn(d.socket!);
}

/** What a dial for HTTP/2 sends first and offers ({@linkcode dialStream}). */
export interface StreamDialOptions {
  /** Bytes sent first on the connection, before TLS (the PROXY protocol header). */
  preface?: Uint8Array;
  /** The protocols offered by ALPN (default `["h2"]`). */
  alpn?: string[];
  /** This request's TLS server name, over the transport's (`RoundTrip.serverName`). */
  serverName?: string;
}

/**
 * Connects for HTTP/2: a node stream for `node:http2` and the protocol the upstream chose by
 * ALPN (`h2` expected over TLS; "" for h2c).
 *
 * @example
 * ```ts ignore
 * const { stream, alpn } = await dialStream("127.0.0.1:8443", 3000, { insecure: true });
 * ```
 */
export async function dialStream(
  address: string,
  timeout: number,
  tls: UpstreamTls | null,
  options: DialOptions = {},
  { preface, alpn = ["h2"], serverName }: StreamDialOptions = {},
): Promise<{ stream: Duplex; alpn: string; close(): void; bytes(): ByteConn }> {
  const d = await dial({
    address,
    timeout,
    tls,
    options,
    shape: "node",
    alpn,
    preface,
    serverName,
  });
  // `bytes` hands the connection to the HTTP/1.1 client instead (the upstream chose it by ALPN)
  if (d.socket) {
    const socket = d.socket;
    return {
      stream: socket,
      alpn: d.alpn,
      close: () => socket.destroy(),
      bytes: () => new NodeSocketConn(socket),
    };
  }
  const conn = d.conn!;
  return {
    // node:stream loads here, for HTTP/2 upstreams only: a static import put Node's stream
    // machinery into every proxying server's memory
    stream: byteConnStream(conn, (await import("node:stream")).Duplex),
    alpn: d.alpn,
    close: () => conn.close(),
    bytes: () => conn,
  };
}

/** The TCP connection under a dialed one (under OpenSSL's TLS, or a node socket's wrapper). */
function tcpOf(d: Dialed): net.Socket | Deno.TcpConn {
  if (d.socket) return d.socket;
  let c: ByteConn = d.conn!;
  if (c instanceof OpenSslConn) c = c.carrier;
  if (c instanceof NodeSocketConn) return c.socket;
  return c as Deno.TcpConn;
}

/** TCP keep-alive probes every `seconds` on an upstream connection (Go's Dialer.KeepAlive). */
function keepAliveOn(d: Dialed, seconds: number): void {
  let ports: [number, number] | undefined;
  const c = tcpOf(d);
  if ("remotePort" in c) {
    const s = c as net.Socket;
    s.setKeepAlive(true, seconds * 1000);
    if (s.localPort && s.remotePort) ports = [s.localPort, s.remotePort];
  } else {
    const t = c as Deno.TcpConn;
    t.setKeepAlive?.(true);
    const l = t.localAddr as Deno.NetAddr, r = t.remoteAddr as Deno.NetAddr;
    if (l?.port && r?.port) ports = [l.port, r.port];
  }
  if (ports) applyConnectionKeepAlive(ports[0], ports[1], seconds);
}
