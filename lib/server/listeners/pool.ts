/**
 * The listener pool: sockets keyed by address (+ TLS material), reference-counted across
 * configs. A reload that keeps an address reuses its socket and only swaps the handler, so
 * no connection is refused or dropped; a socket closes (gracefully) when no config holds it.
 *
 * @module
 */
import type {
  ConnectionOptions,
  ConnHandler,
  ListenerHandle,
  ListenOptions,
  ServeInfo,
  TlsCertificateSource,
} from "../module/listener.ts";
import { joinHostPort, parseNetworkAddress } from "../net/address.ts";
import { resolveBindHost, type ResolveOptions } from "../net/resolve_host.ts";
import { reusePortAvailable } from "./deno/listener.ts";
import { plainAvailable, serveDenoFd, serveDenoPlain } from "./deno/plain.ts";
import { Relay } from "./deno/relay.ts";
import { DEFAULT_CONNECTION_OPTIONS } from "../module/listener.ts";
import { applyKeepAlive } from "./keepalive.ts";
import { headAnswer } from "./head.ts";
import { listenError } from "./listen_error.ts";
import type { H3Server } from "./h3/listener.ts";

/**
 * How a pool shares its listening addresses with other processes (the worker processes of one
 * server): every TCP socket is bound with SO_REUSEPORT, so the kernel spreads new connections
 * over the processes listening on an address.
 */
export interface SharedListening {
  /**
   * The port to bind for each `:0` address, by pool key (see {@linkcode ListenerPool.boundPorts}):
   * the ports the first worker was given, so that every worker listens on the same ones.
   */
  ports: Map<string, number>;
  /**
   * True in the one process that serves unix socket addresses: Linux has no SO_REUSEPORT for
   * unix sockets, and a second process binding the path would take it from the first. In the
   * others a unix address is held without a socket.
   */
  unix: boolean;
}

/** A listen this process does not serve (a unix socket or HTTP/3 another worker serves). */
class NotServed implements ListenerHandle {
  constructor(readonly address: string) {}
  readonly port = undefined;
  setHandler(): void {}
  release(): Promise<void> {
    return Promise.resolve();
  }
}

/** What a handle serves on its socket: TLS, the connection settings, the names it answers. */
interface HandleServes {
  tls?: TlsCertificateSource;
  connection?: ConnectionOptions;
  names?: readonly string[];
}

class Handle implements ListenerHandle {
  handler?: ConnHandler;
  released = false;
  readonly address: string;
  readonly port?: number;
  readonly tls?: TlsCertificateSource;
  readonly connection?: ConnectionOptions;
  readonly names?: readonly string[];
  /** A handle on `socket`, at the socket's address and port as they are now. */
  constructor(readonly socket: Socket, serves: HandleServes = {}) {
    this.address = socket.address;
    this.port = socket.port;
    this.tls = serves.tls;
    this.connection = serves.connection;
    this.names = serves.names;
  }
  setHandler(handler: ConnHandler): void {
    this.handler = handler;
    this.socket.pool.wake(this.socket);
    if (this.tls) this.socket.pool.certificateSourceChanged(this);
    this.socket.pool.connectionChanged(this);
  }
  closesOnRelease(): boolean {
    return !this.released && this.socket.handles.every((h) => h === this || h.released);
  }
  servesHttp3(host: string): boolean {
    return this.socket.h3?.serves(host) ?? false;
  }
  release(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.released = true;
    return this.socket.pool.releaseHandle(this);
  }
}

/** What the pool needs of a running server, whichever engine runs it. */
interface RunningServer {
  shutdown(): Promise<void>;
  readonly finished: Promise<void>;
  /** TLS listeners: the certificates (or their source) changed. */
  certificatesChanged?(): void;
}

interface Socket {
  key: string;
  pool: ListenerPool;
  server: RunningServer;
  handles: Handle[];
  address: string;
  port?: number;
  unixPath?: string;
  /** TLS sockets: unsubscribes from the current certificate source. */
  unsubscribe?: () => void;
  /** TLS sockets: the source the subscription is on. */
  subscribed?: TlsCertificateSource;
  /** The TCP keep-alive last set on the listening socket (JSON), if any. */
  keepalive?: string;
  /** The host the socket is bound to (keep-alive finds the socket by address). */
  bindHost?: string;
  /** The connection options it is opened with (before any handle holds it). */
  opening?: ConnectionOptions;
  /** HTTP/3 sockets: the QUIC listener. */
  h3?: H3Server;
  /** Requests waiting for a handler (the socket's config is not started yet). */
  waiting?: { promise: Promise<void>; resolve: () => void };
}

/** What opening a socket needs: its address, parsed, and the listen that opens it. */
interface SocketSpec {
  /** The pool's key of the socket. */
  key: string;
  /** The host as the address names it (a socket path for unix, a descriptor for fd). */
  host: string;
  /** What to bind: the host, looked up (unix and fd: the host itself). */
  bind: string;
  /** The port (0: any free port). */
  port: number;
  /** A unix socket. */
  unix: boolean;
  /** The network of the address (`tcp`, `tcp4`, `tcp6`, `unix`, `fd`). */
  network: string;
  /** The listen's options (TLS, connection options). */
  options: ListenOptions;
}

/** The host to bind: an empty host means every interface of the network's family. */
function bindHost(host: string, network: string): string {
  return host === "" ? (network === "tcp6" ? "::" : "0.0.0.0") : host;
}

/** Removes a unix socket file left by an earlier process (never a regular file). */
function removeStaleSocket(path: string): void {
  try {
    if (Deno.lstatSync(path).isSocket) Deno.removeSync(path);
  } catch { /* absent */ }
}

/** The source of a TLS socket no config holds any more: no certificates. */
const NO_CERTIFICATES: TlsCertificateSource = {
  getCertificate: () => Promise.resolve(null),
  subscribe: () => () => {},
};

/**
 * A pool of HTTP listeners.
 *
 * @example
 * ```ts
 * import { ListenerPool } from "./pool.ts";
 * const pool = new ListenerPool();
 * const h = await pool.listen({ address: "127.0.0.1:0" });
 * h.setHandler(() => new Response("hi"));
 * await h.release();
 * ```
 */
export class ListenerPool {
  #sockets = new Map<string, Socket>();
  #warnedEngine = false;
  /** Serves deno-engine connections whose first bytes a listener wrapper read. */
  #relay = new Relay();
  /** Longest wait for in-flight requests when a socket closes (ms); undefined = no limit. */
  gracePeriodMs?: number;
  /** How listen host names are resolved (asynchronously, with a time limit) before binding. */
  resolve: ResolveOptions = {};
  /** Where listener events are logged (TLS listener replacement). */
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Set in worker processes: the addresses are shared with the other workers. */
  shared?: SharedListening;

  /** The port of every open `:0` socket, by pool key (what the other workers are to bind). */
  boundPorts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, s] of this.#sockets) {
      if (key.includes("#") && s.port !== undefined) out[key] = s.port;
    }
    return out;
  }

  /** Number of open sockets. */
  get size(): number {
    return this.#sockets.size;
  }

  /**
   * Acquires a listener; reuses an open socket with the same key. Throws on bind errors.
   * Port-0 addresses are told apart by `occurrence` (the n-th request for that address within
   * one config), so a reload keeps each `:0` listener on its port.
   */
  async listen(options: ListenOptions, occurrence = 0): Promise<ListenerHandle> {
    if (/^(udp[46]?|fdgram)\//.test(options.address)) {
      return await this.#listenH3(options, occurrence);
    }
    // `fd/N`: a listening socket this process inherited
    const fd = /^fd\/(\d+)$/.exec(options.address);
    const addr = fd
      ? { network: "fd", host: fd[1], startPort: 0, endPort: 0 }
      : parseNetworkAddress(options.address);
    if (addr.startPort !== addr.endPort) {
      throw new Error(`listen: one port per listener, got range ${options.address}`);
    }
    if (addr.network.startsWith("udp")) throw new Error(`listen: ${addr.network} is not supported`);
    const unix = addr.network.startsWith("unix");
    let key = unix
      ? `unix/${addr.host}`
      : fd
      ? `fd/${addr.host}`
      : `${addr.network}/${joinHostPort(addr.host, addr.startPort)}`;
    if (!unix && !fd && addr.startPort === 0) key += `#${occurrence}`;
    if (options.tls) key += "|tls";
    let engine = options.engine ?? "deno";
    if (options.tls && engine === "deno" && !reusePortAvailable()) {
      // Live certificates on the deno engine replace listeners on a shared port, which needs
      // --unstable-net; without it HTTPS runs on the node engine (slower).
      if (!this.#warnedEngine) {
        this.#warnedEngine = true;
        this.log?.(
          "HTTPS listeners run on the node engine (slower): start Deno with --unstable-net " +
            "for the deno engine (faster)",
          { address: options.address },
        );
      }
      engine = "node";
    }
    if (engine === "deno" && !plainAvailable()) {
      // this Deno cannot serve connections one by one: connection limits, wrappers and
      // inherited sockets then need the node engine
      engine = "node";
    }
    if (fd && engine !== "node" && (options.tls || options.connection?.wrappers.length)) {
      throw new Error(
        `listen ${options.address}: the deno listener engine cannot run TLS or listener ` +
          `wrappers on an inherited socket; the node engine can`,
      );
    }
    if (engine !== "deno") key += `|${engine}`;
    if (unix && this.shared && !this.shared.unix) return new NotServed(`unix/${addr.host}`);
    let socket = this.#sockets.get(key);
    if (!socket) {
      // a host name is looked up here, off the event loop; the socket binds the address found
      const bind = unix || fd
        ? addr.host
        : await resolveBindHost(addr.host, addr.network, this.resolve);
      try {
        const spec: SocketSpec = {
          key,
          host: addr.host,
          bind,
          port: addr.startPort === 0 ? this.shared?.ports.get(key) ?? 0 : addr.startPort,
          unix,
          network: addr.network,
          options,
        };
        socket = engine === "node" ? await this.#openNode(spec) : await this.#open(spec);
      } catch (e) {
        throw listenError(e, options.address);
      }
      // Another listen for the same key may have opened it meanwhile (node binds async).
      const raced = this.#sockets.get(key);
      if (raced) {
        await socket.server.shutdown();
        socket = raced;
      } else this.#sockets.set(key, socket);
    }
    const handle = new Handle(socket, { tls: options.tls, connection: options.connection });
    socket.handles.push(handle);
    if (socket.handles.length === 1) this.#keepAlive(socket, options.connection);
    return handle;
  }

  /**
   * An HTTP/3 listener: `udp/host:port` (a QUIC endpoint bound there) or `fdgram/N` (an
   * inherited UDP socket), always with TLS. Keyed by address like the TCP sockets.
   */
  async #listenH3(options: ListenOptions, occurrence: number): Promise<ListenerHandle> {
    const tls = options.tls;
    if (!tls) throw new Error(`listen ${options.address}: HTTP/3 needs TLS`);
    const fdgram = /^fdgram\/(\d+)$/.exec(options.address);
    const addr = fdgram
      ? { network: "fdgram", host: fdgram[1], startPort: 0, endPort: 0 }
      : parseNetworkAddress(options.address);
    let key = fdgram
      ? `fdgram/${addr.host}`
      : `${addr.network}/${joinHostPort(addr.host, addr.startPort)}`;
    if (!fdgram && addr.startPort === 0) key += `#${occurrence}`;
    key += "|h3";
    // one opening at a time per address: a second UDP bind of it would fail
    while (this.#openingH3.has(key)) await this.#openingH3.get(key);
    let socket = this.#sockets.get(key);
    if (!socket) {
      const opening = Promise.withResolvers<void>();
      this.#openingH3.set(key, opening.promise);
      try {
        socket = await this.#openH3(key, addr, !!fdgram, options, tls);
        this.#sockets.set(key, socket);
      } finally {
        this.#openingH3.delete(key);
        opening.resolve();
      }
    }
    const handle = new Handle(socket, {
      tls,
      connection: options.connection,
      names: options.names,
    });
    socket.handles.push(handle);
    return handle;
  }

  /** HTTP/3 sockets being opened, by key. */
  #openingH3 = new Map<string, Promise<void>>();

  async #openH3(
    key: string,
    addr: { network: string; host: string; startPort: number },
    fdgram: boolean,
    options: ListenOptions,
    tls: TlsCertificateSource,
  ): Promise<Socket> {
    const { serveH3 } = await import("./h3/listener.ts");
    const opened = { key, pool: this, handles: [] as Handle[] } as unknown as Socket;
    opened.opening = options.connection;
    const bind = fdgram
      ? ""
      : await resolveBindHost(addr.host, addr.network.replace("udp", "tcp"), this.resolve);
    const server = serveH3({
      hostname: bindHost(bind, addr.network === "udp6" ? "tcp6" : "tcp"),
      port: addr.startPort === 0 ? this.shared?.ports.get(key) ?? 0 : addr.startPort,
      inheritedFd: fdgram ? Number(addr.host) : undefined,
      reusePort: !!this.shared && !fdgram,
      getter: () => opened.handles.length ? this.#source(opened) : tls,
      names: () => this.#names(opened) ?? options.names ?? [],
      handler: (req, si) => this.#dispatch(opened, req, si),
      localAddress: () => opened.address,
      maxHeaderBytes: () => this.#connection(opened).maxHeaderBytes,
      log: (msg, fields) => this.log?.(msg, fields),
    });
    opened.server = server;
    opened.h3 = server;
    opened.port = server.port;
    opened.address = fdgram ? `fdgram/${addr.host}` : joinHostPort(addr.host, server.port);
    return opened;
  }

  /** The host names of an HTTP/3 socket's newest live handle. */
  #names(socket: Socket): readonly string[] | undefined {
    for (let i = socket.handles.length - 1; i >= 0; i--) {
      const h = socket.handles[i];
      if (!h.released && h.names) return h.names;
    }
    return undefined;
  }

  /** The connection options of a socket: its newest live handle's. */
  #connection(socket: Socket): ConnectionOptions {
    for (let i = socket.handles.length - 1; i >= 0; i--) {
      const h = socket.handles[i];
      if (h.handler && !h.released && h.connection) return h.connection;
    }
    for (let i = socket.handles.length - 1; i >= 0; i--) {
      if (!socket.handles[i].released && socket.handles[i].connection) {
        return socket.handles[i].connection!;
      }
    }
    return socket.opening ?? DEFAULT_CONNECTION_OPTIONS;
  }

  /** Sets TCP keep-alive on the socket when the options ask for other settings than it has. */
  #keepAlive(socket: Socket, c: ConnectionOptions | undefined): void {
    if (socket.unixPath || socket.port === undefined) return;
    const want = c?.keepalive ? JSON.stringify(c.keepalive) : undefined;
    if (want === socket.keepalive) return;
    if (c?.keepalive) applyKeepAlive(socket.port, c.keepalive, socket.bindHost);
    else if (socket.keepalive) applyKeepAlive(socket.port, { enabled: false }, socket.bindHost);
    socket.keepalive = want;
  }

  /** A config took over (or left) a socket: its keep-alive follows the newest options. */
  connectionChanged(handle: ListenerHandle): void {
    const socket = (handle as Handle).socket;
    try {
      this.#keepAlive(socket, this.#connection(socket));
    } catch (e) {
      this.log?.("setting TCP keep-alive failed", { error: (e as Error).message });
    }
  }

  /** The certificate source of a TLS socket: the newest live config's. */
  #source(socket: Socket): TlsCertificateSource {
    for (let i = socket.handles.length - 1; i >= 0; i--) {
      const h = socket.handles[i];
      if (h.tls && h.handler && !h.released) return h.tls;
    }
    for (let i = socket.handles.length - 1; i >= 0; i--) {
      if (socket.handles[i].tls && !socket.handles[i].released) return socket.handles[i].tls!;
    }
    return NO_CERTIFICATES;
  }

  /** A config took over (or left) the TLS socket of `handle`: follow its certificate source. */
  certificateSourceChanged(handle: ListenerHandle): void {
    const socket = (handle as Handle).socket;
    const source = this.#source(socket);
    if (socket.subscribed !== source) {
      socket.unsubscribe?.();
      socket.subscribed = source;
      socket.unsubscribe = source.subscribe(() => socket.server.certificatesChanged?.());
    }
    socket.server?.certificatesChanged?.();
  }

  /**
   * Hands a request to the newest live handle of a socket. While the socket's only holders are
   * configs not started yet (a new address between provision and start; with workers, until
   * every worker provisioned the config), the request waits for one to start; once none holds
   * the socket, it is answered 503.
   */
  #dispatch(socket: Socket, req: Request, si: ServeInfo): Response | Promise<Response> {
    for (let i = socket.handles.length - 1; i >= 0; i--) {
      const h = socket.handles[i];
      if (h.handler && !h.released) return h.handler(req, si);
    }
    if (socket.handles.some((h) => !h.released)) {
      socket.waiting ??= Promise.withResolvers<void>();
      return socket.waiting.promise.then(() => this.#dispatch(socket, req, si));
    }
    return new Response("no server is configured for this address\n", { status: 503 });
  }

  /** A handle of `socket` got a handler or was released: waiting requests go on. */
  wake(socket: { waiting?: { resolve: () => void } }): void {
    const w = socket.waiting;
    socket.waiting = undefined;
    w?.resolve();
  }

  /**
   * Whether TCP sockets bind with SO_REUSEPORT: with worker processes, and on Linux always (as
   * Caddy's `listen_linux.go`; the deno engine's TLS sockets always do), so that a reload that
   * changes an address's kind (plain HTTP and TLS, or the engine: another pool key) binds the
   * new socket beside the old one, which closes once the new config started: the port is never
   * unbound, nothing is refused, and the old socket's requests drain.
   */
  #reusePort(): boolean {
    return !!this.shared || reusePortAvailable();
  }

  async #openNode(spec: SocketSpec): Promise<Socket> {
    const { key, host, bind, port, unix, network, options } = spec;
    const tls = options.tls;
    const { serveNode } = await import("./node/listener.ts");
    const socket = { key, pool: this, handles: [] as Handle[] } as unknown as Socket;
    socket.opening = options.connection;
    const handler = (req: Request, si: ServeInfo) => this.#dispatch(socket, req, si);
    if (network === "fd") {
      // the inherited socket is already bound and listening: node:net adopts it as it is
      socket.address = `fd/${host}`;
      const server = await serveNode({
        fd: Number(host),
        tls: tls ? { source: () => socket.handles.length ? this.#source(socket) : tls } : undefined,
        handler,
        localAddress: () => socket.address,
        connection: () => this.#connection(socket),
      });
      socket.server = server;
      // a TCP socket's port, so TCP keep-alive options find it as they find the others
      if (server.port) {
        socket.port = server.port;
        socket.bindHost = server.host;
      }
    } else if (unix) {
      removeStaleSocket(host);
      socket.address = `unix/${host}`;
      socket.unixPath = host;
      socket.server = await serveNode({
        path: host,
        handler,
        localAddress: () => socket.address,
        connection: () => this.#connection(socket),
      });
    } else {
      const hostname = bindHost(bind, network);
      socket.bindHost = hostname;
      const server = await serveNode({
        hostname,
        port,
        reusePort: this.#reusePort(),
        // the config opening the socket holds no handle on it yet: its source to start with
        tls: tls ? { source: () => socket.handles.length ? this.#source(socket) : tls } : undefined,
        handler,
        localAddress: () => socket.address,
        connection: () => this.#connection(socket),
        onClientRefused: (reason, remote) =>
          this.log?.("client certificate refused; connection closed", {
            reason,
            remote: remote.transport === "tcp" ? `${remote.hostname}:${remote.port}` : "",
          }),
      });
      socket.server = server;
      socket.port = server.port;
      socket.address = joinHostPort(host, server.port);
    }
    return socket;
  }

  async #open(spec: SocketSpec): Promise<Socket> {
    const { key, host, bind, port, unix, network, options } = spec;
    const tls = options.tls;
    const socket = { key, pool: this, handles: [] as Handle[] } as unknown as Socket;
    socket.opening = options.connection;
    const handler = (req: Request, si: ServeInfo) => {
      // HTTP/2 (no Host field): Deno.serve sends a HEAD answer's body as DATA frames, which
      // clients reset as a protocol error; the answer goes without it (see headAnswer).
      if (req.method === "HEAD" && !req.headers.has("host")) {
        return Promise.resolve(this.#dispatch(socket, req, si)).then(headAnswer);
      }
      return this.#dispatch(socket, req, si);
    };
    const plain = {
      handler,
      localAddress: () => socket.address,
      connection: () => this.#connection(socket),
      relay: this.#relay,
    };
    if (network === "fd") {
      socket.address = `fd/${host}`;
      const server = await serveDenoFd(Number(host), plain);
      socket.server = server;
      if (server.port) {
        socket.port = server.port;
        socket.bindHost = server.host;
      }
    } else if (unix) {
      removeStaleSocket(host);
      socket.address = `unix/${host}`;
      socket.unixPath = host;
      socket.server = serveDenoPlain(Deno.listen({ transport: "unix", path: host }), plain);
    } else {
      const hostname = bindHost(bind, network);
      socket.bindHost = hostname;
      if (tls) {
        const { serveDenoTls } = await import("./deno/listener.ts");
        const server = await serveDenoTls({
          hostname,
          port,
          // the config opening the socket holds no handle on it yet: its source to start with
          getter: () => socket.handles.length ? this.#source(socket) : tls,
          alpn: () => this.#connection(socket).alpn,
          upgrades: () => this.#connection(socket).upgrades === true,
          connection: () => this.#connection(socket),
          // each new listener generation gets the keep-alive its predecessors had
          onListener: () => {
            const ka = socket.keepalive;
            socket.keepalive = undefined;
            if (ka) this.#keepAlive(socket, this.#connection(socket));
          },
          handler,
          localAddress: () => socket.address,
          log: (msg, fields) => this.log?.(msg, fields),
          shared: !!this.shared,
        });
        socket.server = server;
        socket.port = server.port;
        socket.address = joinHostPort(host, server.port);
      } else {
        const listener = Deno.listen(
          {
            hostname,
            port,
            ...(this.#reusePort() ? { reusePort: true } : {}),
          } as Deno.TcpListenOptions,
        );
        const bound = listener.addr as Deno.NetAddr;
        socket.port = bound.port;
        socket.address = joinHostPort(host, bound.port);
        socket.server = serveDenoPlain(listener, plain);
      }
    }
    return socket;
  }

  /** Called by a handle's release. */
  async releaseHandle(released: ListenerHandle): Promise<void> {
    const handle = released as Handle;
    const socket = handle.socket;
    socket.handles = socket.handles.filter((h) => h !== handle);
    this.wake(socket);
    if (socket.handles.length > 0 || this.#sockets.get(socket.key) !== socket) {
      if (handle.tls && socket.handles.length > 0) this.certificateSourceChanged(socket.handles[0]);
      return;
    }
    this.#sockets.delete(socket.key);
    socket.unsubscribe?.();
    // The socket stops accepting at once (the address is free again); in-flight requests
    // drain in the background, so a reload is never held up by long-lived connections.
    const drained = socket.server.shutdown().then(() => socket.server.finished);
    const tracked = drained.catch(() => {}).finally(() => this.#draining.delete(tracked));
    this.#draining.add(tracked);
    if (socket.unixPath) await Deno.remove(socket.unixPath).catch(() => {});
  }

  #draining = new Set<Promise<void>>();

  /**
   * Closes every socket (process exit) and waits for in-flight requests, at most `graceMs`
   * when given.
   */
  async closeAll(graceMs: number | undefined = this.gracePeriodMs): Promise<void> {
    const all = [...this.#sockets.values()];
    this.#sockets.clear();
    for (const s of all) for (const h of s.handles) h.released = true;
    for (const s of all) this.wake(s);
    for (const s of all) s.unsubscribe?.();
    for (const s of all) {
      const drained = s.server.shutdown().then(() => s.server.finished);
      const tracked = drained.catch(() => {}).finally(() => this.#draining.delete(tracked));
      this.#draining.add(tracked);
      if (s.unixPath) await Deno.remove(s.unixPath).catch(() => {});
    }
    await this.drained(graceMs);
    await this.#relay.close();
  }

  /** Waits until every closed socket drained its requests, at most `graceMs` when given. */
  async drained(graceMs?: number): Promise<void> {
    const all = Promise.all([...this.#draining]);
    if (graceMs === undefined) {
      await all;
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
  }
}
