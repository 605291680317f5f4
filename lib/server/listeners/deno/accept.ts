/**
 * Accepting connections on the `deno` engine one by one (TCP, unix sockets, TLS), each served
 * by its own instance of Deno's HTTP server (`serveHttpOnConnection`: HTTP/1.1 and HTTP/2, the
 * TLS handshake in Rust).
 *
 * Deno's listener-wide server (`serveHttpOnListener`, what `Deno.serve` runs) owns its
 * listener: the only way to stop it accepting is its shutdown, which also closes every
 * connection it accepted that has no request in flight yet, mid-handshake ones included (a
 * client that just sent its request gets a reset). Serving each connection on its own lets a
 * listener close while the connections it accepted live on, each until its client is done: a
 * listener replaced for new certificates (see `listener.ts`) drops nothing it accepted. And
 * each connection's requests come through a handler of its own, which is what the connection
 * limits (`limits.ts`) and the peer a PROXY header names (`plain.ts`) need.
 *
 * @module
 */
import {
  type ConnectionOptions,
  type ConnHandler,
  type PeerAddress,
  type ServeInfo,
  StreamRefused,
} from "../../module/listener.ts";
import { ConnectionWatch, limitsOf, type Watched, watchedHandler } from "./limits.ts";
import { type Relayed, UpgradeRelay } from "./upgrade_relay.ts";

/** What Deno's per-connection HTTP server returns. */
interface ConnectionServer {
  shutdown(): Promise<void>;
  finished: Promise<void>;
}

/** `Deno[Deno.internal].serveHttpOnConnection`. */
export type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal | undefined,
  handler: (
    request: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ) => Response | Promise<Response>,
  onError: (e: unknown) => Response,
  onListen: () => void,
) => ConnectionServer;

/** `Deno[Deno.internal].serveHttpOnConnection`, when this Deno has it. */
export function serveOnConnection(): ServeOnConnection | undefined {
  const d = Deno as unknown as Record<symbol | string, unknown>;
  const i = d[d.internal as symbol] as { serveHttpOnConnection?: unknown } | undefined;
  return typeof i?.serveHttpOnConnection === "function"
    ? i.serveHttpOnConnection as ServeOnConnection
    : undefined;
}

/** How one connection is served. */
export interface ServeConnection {
  /** Answers one request. */
  handler: ConnHandler;
  /** The peer handlers see (the socket's, or what a PROXY header named). */
  peer: PeerAddress;
  /** The listen address reported to handlers. */
  localAddress: () => string;
  /** A TLS connection (handlers get `info.tls`). */
  tls?: boolean;
  /** The connection options in force when it was accepted (timeouts, head limit). */
  connection?: ConnectionOptions;
  /** When it was accepted (`performance.now()`; default now): the first head counts from it. */
  since?: number;
  /**
   * Its requests may upgrade it (WebSocket): it is relayed to the set's loopback server,
   * which can hand a connection over (see `upgrade_relay.ts`), under the same limits.
   */
  relay?: boolean;
  /** Whether it speaks HTTP/2, when known (its first bytes were looked at). */
  http2?: boolean;
  /**
   * Requests it has had answered elsewhere (the upgrade relay, before handing it back): its
   * next head is then held to `idle_timeout` from `since`, not to `read_header_timeout`.
   */
  served?: number;
}

/** Deno's own answer to a failed handler, without logging a refused stream. */
function onError(e: unknown): Response {
  if (!(e instanceof StreamRefused)) console.error(e);
  return new Response("Internal Server Error", { status: 500 });
}

/** The peer of an accepted Deno connection, as handlers see it. */
export function peerOfConn(conn: Deno.Conn): PeerAddress {
  const ra = conn.remoteAddr as Deno.NetAddr | Deno.UnixAddr;
  return ra.transport === "unix" ? { transport: "unix", path: (ra as Deno.UnixAddr).path ?? "" } : {
    transport: "tcp",
    hostname: (ra as Deno.NetAddr).hostname,
    port: (ra as Deno.NetAddr).port,
  };
}

/**
 * The connections being served, whichever listener accepted them, each by its own instance of
 * Deno's HTTP server, under the limits of its connection options (see `limits.ts`).
 */
export class ConnectionSet {
  #servers = new Set<ConnectionServer>();
  #watch = new ConnectionWatch();
  #relay?: UpgradeRelay;
  #relayed = new Set<Promise<void>>();

  /** Connections open right now. */
  get size(): number {
    return this.#servers.size + this.#relayed.size;
  }

  /**
   * Relays `conn` to the loopback server (see `upgrade_relay.ts`), under its limits; one whose
   * first request needs no relay comes back to be served directly once it is answered.
   */
  #relayConn(
    serveOn: ServeOnConnection,
    conn: Deno.Conn,
    o: ServeConnection,
    limits: ReturnType<typeof limitsOf>,
    dispatch: (req: Request, completed: Promise<void> | undefined) => Response | Promise<Response>,
  ): void {
    const relay = this.#relay ??= new UpgradeRelay(onError);
    let entry: Relayed | null = null;
    let closeOnArrival = false;
    const watched = limits
      ? this.#watch.add(limits, o.since, {
        close: () => entry ? entry.closeIdle() : (closeOnArrival = true),
        abort: () => entry ? entry.close() : (closeOnArrival = true),
      })
      : undefined;
    const handle = watched
      ? watchedHandler(watched, dispatch)
      : (req: Request, info: { completed?: Promise<void> }) => dispatch(req, info.completed);
    const handBack = (c: Deno.Conn) =>
      this.serve(serveOn, c, { ...o, relay: false, since: performance.now(), served: 1 });
    const tracked: Promise<void> = relay.relay(conn, handle, handBack).then(async (e) => {
      entry = e;
      if (e && closeOnArrival) e.close();
      await e?.done;
    }).catch(() => {}).finally(() => {
      if (watched) this.#watch.remove(watched);
      this.#relayed.delete(tracked);
    });
    this.#relayed.add(tracked);
  }

  /** Serves `conn` until it closes. */
  serve(serveOn: ServeOnConnection, conn: Deno.Conn, o: ServeConnection): void {
    const { handler, peer, localAddress } = o;
    const tls = o.tls === true;
    const limits = o.connection ? limitsOf(o.connection) : null;
    const dispatch = (req: Request, completed: Promise<void> | undefined) => {
      // rejects when an HTTP/2 answer fails before it is sent (a reset stream): not a crash
      completed?.catch(() => {});
      const si: ServeInfo = { remoteAddr: peer, localAddress: localAddress(), completed };
      if (tls) si.tls = { proto: undefined };
      if (o.http2 !== undefined) si.http2 = o.http2;
      return handler(req, si);
    };
    if (o.relay) return this.#relayConn(serveOn, conn, o, limits, dispatch);
    let server: ConnectionServer | undefined;
    let watched: Watched | undefined;
    try {
      if (limits) {
        // a signal of its own: the abort cuts this connection only
        const ac = new AbortController();
        watched = this.#watch.add(limits, o.since, {
          // the sweep runs later, once `server` is set
          close: () => void server?.shutdown().catch(() => {}),
          abort: () => ac.abort(),
        });
        if (o.served) watched.served = o.served;
        server = serveOn(conn, ac.signal, watchedHandler(watched, dispatch), onError, () => {});
      } else {
        // no abort signal: Deno adds a listener to it per connection and never removes it
        server = serveOn(
          conn,
          undefined,
          (req, info) => dispatch(req, info.completed),
          onError,
          () => {},
        );
      }
    } catch {
      if (watched) this.#watch.remove(watched);
      try {
        conn.close();
      } catch { /* closed */ }
      return;
    }
    this.#servers.add(server);
    // a connection that ends badly (reset, failed handshake) is the client's business
    server.finished.catch(() => {}).finally(() => {
      this.#servers.delete(server);
      if (watched) this.#watch.remove(watched);
    });
  }

  /**
   * Shuts every connection down: requests in flight finish, idle connections close (HTTP/2
   * clients get a GOAWAY). Resolves when all are closed.
   */
  async shutdown(): Promise<void> {
    const all = [...this.#servers];
    await Promise.all([
      ...all.map((s) => s.shutdown().catch(() => {})),
      this.#relay?.shutdown(),
    ]);
    await Promise.all([...all.map((s) => s.finished.catch(() => {})), ...this.#relayed]);
  }
}

/** How long a closing listener may take to find its queue empty before it closes anyway (ms). */
export const QUIET_CLOSE_LIMIT_MS = 1000;
/** A closing listener that was offered nothing for this long closes (ms). */
export const QUIET_MS = 2;

/** An accept loop on one listener. */
export interface AcceptLoop {
  /**
   * Stops accepting and closes the listener. Connections already accepted are not touched.
   * With `quiet` (another listener on the port takes over), the listener closes when its
   * queue is empty: right after an accept finds nothing waiting (Deno accepts a waiting
   * connection at once, so an accept that has to wait means the kernel had none), or when it
   * was offered nothing for {@link QUIET_MS}; at the latest after
   * {@link QUIET_CLOSE_LIMIT_MS}. Without `quiet`, it closes at once.
   */
  close(quiet?: boolean): Promise<void>;
  /** Resolves when the listener is closed. */
  readonly closed: Promise<void>;
}

/** True when `p` is settled already (it settles within the current microtask queue). */
function settledNow(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  return Promise.resolve().then(() => Promise.resolve()).then(() => done);
}

/**
 * Accepts connections on `listener` (TCP, unix or TLS) and hands each to `onConnection`.
 *
 * @example
 * ```ts ignore
 * const loop = acceptLoop(Deno.listenTls(opts), (conn) => set.serve(serveOn, conn, handler, onError));
 * await loop.close(true);
 * ```
 */
export function acceptLoop<C extends Deno.Conn>(
  listener: Deno.Listener<C>,
  onConnection: (conn: C) => void,
): AcceptLoop {
  let quiet = false;
  let shut = false;
  let accepted = 0;
  let markClosed!: () => void;
  const closed = new Promise<void>((r) => (markClosed = r));
  const shutNow = () => {
    if (shut) return;
    shut = true;
    try {
      listener.close();
    } catch { /* closed */ }
  };
  void (async () => {
    while (!shut) {
      const next = listener.accept();
      // closing: an accept that has to wait finds the queue empty, the moment to close
      if (quiet && !(await settledNow(next))) shutNow();
      let conn: C;
      try {
        conn = await next;
      } catch (e) {
        // closed by us; anything else (EMFILE...) must not end the loop of an open listener
        if (shut || e instanceof Deno.errors.BadResource) break;
        await new Promise((r) => setTimeout(r, 10));
        continue;
      }
      accepted++;
      onConnection(conn);
    }
    shutNow();
    markClosed();
  })();
  return {
    closed,
    async close(whenQuiet = false) {
      if (!whenQuiet) shutNow();
      if (quiet || shut) return closed;
      quiet = true;
      // the loop may be waiting on an accept issued before: offered nothing for a while, or
      // too long a wait altogether, and it closes from here
      const limit = Date.now() + QUIET_CLOSE_LIMIT_MS;
      while (!shut && Date.now() < limit) {
        const before = accepted;
        await new Promise((r) => setTimeout(r, QUIET_MS));
        if (accepted === before) await new Promise((r) => setTimeout(r, 0));
        if (accepted === before) break;
      }
      shutNow();
      return closed;
    },
  };
}
