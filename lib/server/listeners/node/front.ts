/**
 * The accepting side of the node listener engine: every raw connection passes here before TLS
 * and HTTP. Without listener wrappers it goes straight on; with them, its first bytes are read
 * into a `PendingConnection` for the wrappers, and whatever they did not consume is handed on:
 * put back on the socket for plain HTTP, or fed (with the rest of the stream) to a TLS socket
 * through a duplex stream, since a TLS socket reads from the raw descriptor and would not see
 * bytes put back. For TLS it also reads the ClientHello's server name (see `client_hello.ts`).
 *
 * @module
 */
import type net from "node:net";
import type { Duplex, DuplexOptions } from "node:stream";
import { runWrappers } from "../wrappers/mod.ts";
import type { ListenerWrapper, PeerAddress, PendingConnection } from "../../module/listener.ts";
import { parseClientHello } from "../client_hello.ts";

/** A socket's peer address as handlers see it. */
export function peerOf(s: net.Socket): PeerAddress {
  if (s.remoteAddress === undefined) return { transport: "unix", path: "" };
  return {
    transport: "tcp",
    hostname: s.remoteAddress.replace(/^::ffff:(?=\d+\.)/, ""),
    port: s.remotePort ?? 0,
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A PendingConnection over a paused node socket. */
class SocketConnection implements PendingConnection {
  remote: PeerAddress;
  readonly socketRemote: PeerAddress;
  buffered: Uint8Array = new Uint8Array(0);
  #ended = false;
  #wake: (() => void) | null = null;

  constructor(readonly socket: net.Socket, readonly deadline: number | undefined) {
    this.remote = this.socketRemote = peerOf(socket);
    socket.pause();
    socket.on("data", this.#onData);
    socket.on("end", this.#onEnd);
    socket.on("close", this.#onEnd);
    socket.on("error", this.#onEnd);
  }

  #onData = (chunk: Uint8Array) => {
    this.socket.pause();
    this.buffered = concat(this.buffered, new Uint8Array(chunk));
    this.#wake?.();
  };

  #onEnd = () => {
    this.#ended = true;
    this.#wake?.();
  };

  fill(deadline?: number): Promise<"data" | "eof" | "timeout"> {
    if (this.#ended) return Promise.resolve("eof");
    const until = Math.min(deadline ?? Infinity, this.deadline ?? Infinity);
    const before = this.buffered.length;
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = (v: "data" | "eof" | "timeout") => {
        clearTimeout(timer);
        this.#wake = null;
        resolve(v);
      };
      this.#wake = () => done(this.buffered.length > before ? "data" : "eof");
      if (until !== Infinity) {
        timer = setTimeout(() => done("timeout"), Math.max(0, until - performance.now()));
      }
      this.socket.resume();
    });
  }

  consume(n: number): void {
    this.buffered = this.buffered.subarray(n);
  }

  answer(bytes: Uint8Array): void {
    this.socket.end(bytes);
  }

  close(): void {
    this.socket.destroy();
  }

  /** Stops listening; the socket stays paused with `buffered` not yet put back. */
  detach(): void {
    this.socket.off("data", this.#onData);
    this.socket.off("end", this.#onEnd);
    this.socket.off("close", this.#onEnd);
    this.socket.off("error", this.#onEnd);
  }
}

/** What the wrappers left of a connection. */
export interface Wrapped {
  /** The peer address handlers see. */
  remote: PeerAddress;
  /** The stream to speak TLS or HTTP on. */
  stream: net.Socket | Duplex;
  /** TLS: the server name the ClientHello asked for ("" for none). */
  serverName?: string;
}

/** Reads until the buffered bytes hold a whole ClientHello; its server name, or null. */
async function clientHello(conn: SocketConnection): Promise<string | null> {
  while (true) {
    const v = parseClientHello(conn.buffered);
    if (v.kind === "hello") return v.serverName;
    if (v.kind === "invalid") return null;
    if ((await conn.fill()) !== "data") return null;
  }
}

/** What `relayDuplex` needs of `node:stream` (loaded by the caller). */
export interface StreamModule {
  Duplex: new (options: DuplexOptions) => Duplex;
}

/** What `relayDuplex` may do to the bytes each way. */
export interface RelayHooks {
  /** Each chunk `socket` receives: the parts to yield, in order (all of it when absent). */
  read?: (chunk: Uint8Array) => Uint8Array[];
  /** Each chunk written, before it goes to `socket`: false drops it (the write succeeds). */
  write?: (chunk: Uint8Array) => boolean;
}

/**
 * A duplex over `socket`: it yields `first`, then what `socket` receives, each chunk passed
 * through `hooks.read`; writes go to `socket` (through `hooks.write`). Backpressure reaches
 * the socket (paused while the reader is full).
 *
 * @example
 * ```ts ignore
 * const d = relayDuplex(await import("node:stream"), socket, new Uint8Array(0));
 * ```
 */
export function relayDuplex(
  stream: StreamModule,
  socket: Duplex,
  first: Uint8Array,
  hooks: RelayHooks = {},
): Duplex {
  const { read, write } = hooks;
  const d = new stream.Duplex({
    read() {
      socket.resume();
    },
    write(chunk, _enc, cb) {
      if (write && !write(chunk)) return cb();
      socket.write(chunk, cb);
    },
    final(cb) {
      socket.end();
      cb();
    },
    destroy(err, cb) {
      socket.destroy();
      cb(err);
    },
  });
  if (first.length) d.push(first);
  socket.on("data", (chunk: Uint8Array) => {
    let more = true;
    if (!read) more = d.push(chunk);
    else for (const part of read(chunk)) more = d.push(part) && more;
    if (!more) socket.pause();
  });
  socket.on("end", () => d.push(null));
  socket.on("close", () => d.destroy());
  socket.on("error", () => d.destroy());
  return d;
}

/**
 * A duplex that yields `first`, then what `socket` receives; writes go to `socket` (the stream
 * a TLS socket runs over once wrappers have read the connection's first bytes).
 */
export async function duplexOf(socket: net.Socket, first: Uint8Array): Promise<Duplex> {
  return relayDuplex(await import("node:stream"), socket, first);
}

/**
 * Runs the wrappers on a raw connection. Resolves to the stream to go on with (the socket
 * itself with unconsumed bytes put back, or a duplex for TLS) and the peer address, or null
 * when a wrapper answered or closed it. `deadlineMs` bounds the whole wrapper phase.
 *
 * @example
 * ```ts ignore
 * const w = await wrapConnection(socket, wrappers, { tls: false, deadlineMs: 10_000 });
 * if (w) httpServer.emit("connection", w.stream);
 * ```
 */
export async function wrapConnection(
  socket: net.Socket,
  wrappers: readonly ListenerWrapper[],
  o: { tls: boolean; deadlineMs?: number },
): Promise<Wrapped | null> {
  const conn = new SocketConnection(
    socket,
    o.deadlineMs ? performance.now() + o.deadlineMs : undefined,
  );
  const go = await runWrappers(wrappers, conn);
  const serverName = go && o.tls ? await clientHello(conn) : undefined;
  conn.detach();
  if (!go || serverName === null || socket.destroyed) {
    socket.destroy();
    return null;
  }
  if (o.tls) {
    return { remote: conn.remote, stream: await duplexOf(socket, conn.buffered), serverName };
  }
  if (conn.buffered.length) socket.unshift(conn.buffered);
  return { remote: conn.remote, stream: socket };
}
