/**
 * Cleartext listeners of the `deno` engine (TCP, unix sockets, inherited `fd/N` sockets):
 * connections are accepted here and each is served by its own instance of Deno's HTTP server
 * (see `accept.ts`), so the connection limits (`limits.ts`) hold per connection and listener
 * wrappers (`proxy_protocol`) read the connection's first bytes before Deno's server does
 * (`pending.ts`; bytes a wrapper read but did not consume go through `relay.ts`).
 *
 * An inherited socket (`fd/N`) is adopted by `node:net` (Deno has no other way to take a
 * descriptor); each connection it accepts is taken out of Node's handle into a Deno socket
 * resource, which Deno's HTTP server then serves as any other (Node's modules load only for
 * such listeners). Wrappers on an inherited socket need the `node` engine.
 *
 * @module
 */
import type { ConnectionOptions, ConnHandler, PeerAddress } from "../../module/listener.ts";
import { runWrappers } from "../wrappers/mod.ts";
import {
  type AcceptLoop,
  acceptLoop,
  ConnectionSet,
  peerOfConn,
  serveOnConnection,
} from "./accept.ts";
import { DenoPendingConnection } from "./pending.ts";
import type { Relay } from "./relay.ts";
import { libc } from "./_libc.ts";
import { type CleartextStart, cleartextStart, deferListenerAccept } from "./plain_http_peek.ts";

/** Options of a cleartext deno-engine listener. */
export interface DenoPlainOptions {
  /** Answers one request. */
  handler: ConnHandler;
  /** The listen address reported to handlers. */
  localAddress: () => string;
  /** The connection options in force, read at each new connection. */
  connection: () => ConnectionOptions;
  /** Serves connections whose first bytes a wrapper read but left (shared by the pool). */
  relay: Relay;
}

/** A running cleartext deno-engine listener. */
export interface DenoPlainServer {
  /** Stops accepting; in-flight requests finish, idle connections close. */
  shutdown(): Promise<void>;
  /** Resolves when the listener and every connection it accepted are closed. */
  readonly finished: Promise<void>;
  /** Connections open right now. */
  readonly connections: number;
}

/** True when this Deno can serve connections one by one (what this listener needs). */
export function plainAvailable(): boolean {
  return serveOnConnection() !== undefined;
}

function server(
  loop: () => AcceptLoop,
  connections: ConnectionSet,
  closing: { value: boolean },
): DenoPlainServer {
  let finishAll!: () => void;
  const finished = new Promise<void>((r) => (finishAll = r));
  let stopped = false;
  return {
    get connections() {
      return connections.size;
    },
    finished,
    async shutdown() {
      if (stopped) return;
      stopped = true;
      closing.value = true;
      await loop().close(false);
      void connections.shutdown().then(() => finishAll());
    },
  };
}

/** What nothing was seen of says. */
const UNSEEN: CleartextStart = { http2: undefined, mayUpgrade: true };

/**
 * What a connection's first bytes say, looked at in the kernel (Linux with `ffi`): whether it
 * starts HTTP/2, whether its first request may upgrade (`upgrade`: the whole first head is
 * looked at, else the preface only). Unknown when they cannot be seen.
 */
function lookAt(conn: Deno.Conn, upgrade: boolean): CleartextStart {
  peekLibc ??= libc();
  return typeof peekLibc === "string" ? UNSEEN : cleartextStart(peekLibc, conn, upgrade);
}
/** The C library for the look, found once (not per connection). */
let peekLibc: ReturnType<typeof libc> | undefined;

/**
 * Makes a TCP listener defer accepting until a connection sent its first bytes (the look at
 * the HTTP/2 preface and the first request head then sees them), once; false when it cannot.
 */
function deferOnce(listener: Deno.Listener, state: { deferred?: boolean }): void {
  if (state.deferred !== undefined) return;
  peekLibc ??= libc();
  state.deferred = typeof peekLibc !== "string" && deferListenerAccept(peekLibc, listener);
}

/** What a new connection goes through: its wrappers, then Deno's HTTP server. */
function accepting(
  o: DenoPlainOptions,
  connections: ConnectionSet,
  closing: { value: boolean },
  listener?: Deno.Listener,
) {
  const serveOn = serveOnConnection()!;
  const defer: { deferred?: boolean } = {};
  // the look needs the first bytes there when the connection is accepted (a client sends them
  // a moment after its handshake, usually after the accept): without them a connection to
  // routes that may upgrade would be relayed for nothing
  const wantsLook = (c: ConnectionOptions) => c.h2cPreface === true || c.upgrades === true;
  if (listener && wantsLook(o.connection())) deferOnce(listener, defer);
  return (conn: Deno.Conn, peer: PeerAddress = peerOfConn(conn)) => {
    const since = performance.now();
    const c = o.connection();
    // a reload that asks for the look: later connections are accepted with their first bytes
    if (listener && wantsLook(c)) deferOnce(listener, defer);
    // routes that may upgrade (WebSocket): a connection whose first request may ask for it is
    // relayed to a server that can hand a connection over (see upgrade_relay.ts), under the
    // same limits; the others are served directly. Where the protocols make it matter, the
    // HTTP/2 preface is looked for: a listener without h2c closes such a connection unanswered,
    // as Caddy's (its listener reads the preface and closes); with h2c, its requests say HTTP/2
    const serveOne = (x: Deno.Conn, remote: PeerAddress, seen = false) => {
      const looks = !seen && (c.upgrades === true || c.h2cPreface === true);
      const start = looks ? lookAt(x, c.upgrades === true) : UNSEEN;
      if (start.http2 === true && c.h2c !== true) {
        try {
          x.close();
        } catch { /* closed */ }
        return;
      }
      connections.serve(serveOn, x, {
        handler: o.handler,
        peer: remote,
        localAddress: o.localAddress,
        connection: c,
        since,
        relay: c.upgrades === true && (seen || start.mayUpgrade),
        ...(c.h2cPreface && start.http2 !== undefined ? { http2: start.http2 } : {}),
      });
    };
    if (!c.wrappers.length) return serveOne(conn, peer);
    const deadlineMs = c.readHeaderTimeoutMs || c.readTimeoutMs;
    const pending = new DenoPendingConnection(
      conn,
      peer,
      deadlineMs ? since + deadlineMs : undefined,
    );
    runWrappers(c.wrappers, pending).then(async (go) => {
      if (!go || pending.closed) return;
      if (closing.value) return pending.close();
      if (pending.buffered.length === 0) return serveOne(conn, pending.remote);
      // the bytes a wrapper read are not in the socket any more: no look at them
      await o.relay.serve(
        conn,
        pending.buffered,
        (inner) => serveOne(inner, pending.remote, true),
      );
    }, () => pending.close());
  };
}

/**
 * Serves a TCP or unix listener.
 *
 * @example
 * ```ts ignore
 * const s = serveDenoPlain(Deno.listen({ hostname: "127.0.0.1", port: 0 }), options);
 * await s.shutdown();
 * ```
 */
export function serveDenoPlain(listener: Deno.Listener, o: DenoPlainOptions): DenoPlainServer {
  const connections = new ConnectionSet();
  const closing = { value: false };
  const accept = accepting(o, connections, closing, listener);
  const loop = acceptLoop(listener, (conn) => accept(conn));
  return server(() => loop, connections, closing);
}

/** A Deno connection object over a socket resource taken from a Node handle. */
interface TakenConn {
  remoteAddr: Deno.NetAddr;
  localAddr: Deno.NetAddr;
  close(): void;
}

interface Core {
  internalRidSymbol: symbol;
  tryClose(rid: number): void;
}

function core(): Core {
  const d = Deno as unknown as Record<symbol | string, unknown>;
  const i = d[d.internal as symbol] as { core?: Partial<Core> } | undefined;
  const c = i?.core;
  if (typeof c?.internalRidSymbol !== "symbol" || typeof c.tryClose !== "function") {
    throw new Error("this Deno cannot serve inherited sockets on the deno engine");
  }
  return c as Core;
}

/**
 * Serves an inherited listening socket (descriptor `fd`). Resolves once Node adopted it; its
 * port (TCP) is reported for keep-alive settings.
 *
 * @example
 * ```ts ignore
 * const s = await serveDenoFd(3, options);
 * ```
 */
export async function serveDenoFd(
  fd: number,
  o: DenoPlainOptions,
): Promise<DenoPlainServer & { port: number; host: string }> {
  if (o.connection().wrappers.length) {
    throw new Error("listener wrappers on an inherited socket need the node engine");
  }
  const net = (await import("node:net")).default;
  const c = core();
  const sym = c.internalRidSymbol;
  const connections = new ConnectionSet();
  const closing = { value: false };
  const accept = accepting(o, connections, closing);
  const front = net.createServer({ pauseOnConnect: true }, (s) => {
    const handle = (s as unknown as { _handle?: { readStop?(): void; takeStream?(): number } })
      ._handle;
    let rid: number;
    try {
      handle?.readStop?.();
      rid = handle!.takeStream!();
    } catch {
      s.destroy();
      return;
    }
    (s as unknown as { _handle: null })._handle = null;
    const remote: Deno.NetAddr = {
      transport: "tcp",
      hostname: (s.remoteAddress ?? "").replace(/^::ffff:(?=\d+\.)/, ""),
      port: s.remotePort ?? 0,
    };
    const local: Deno.NetAddr = {
      transport: "tcp",
      hostname: s.localAddress ?? "",
      port: s.localPort ?? 0,
    };
    const conn: TakenConn & Record<symbol, number> = {
      [sym]: rid,
      remoteAddr: remote,
      localAddr: local,
      close: () => c.tryClose(rid),
    };
    accept(conn as unknown as Deno.Conn);
  });
  await new Promise<void>((resolve, reject) => {
    front.once("error", reject);
    front.listen({ fd }, () => {
      front.off("error", reject);
      resolve();
    });
  });
  const address = front.address();
  // Node's "close" waits for the connections it counted, which left it for Deno's server: the
  // listening socket is closed once close() returns
  const closed = Promise.withResolvers<void>();
  const loop: AcceptLoop = {
    closed: closed.promise,
    close: () => {
      front.close();
      closed.resolve();
      return closed.promise;
    },
  };
  return {
    ...server(() => loop, connections, closing),
    get connections() {
      return connections.size;
    },
    port: typeof address === "object" && address ? address.port : 0,
    host: typeof address === "object" && address ? address.address : "",
  };
}
