/**
 * Accepting TLS connections on the `deno` engine one by one, each served by its own instance
 * of Deno's HTTP server (`serveHttpOnConnection`: HTTP/1.1 and HTTP/2, the handshake in Rust).
 *
 * Deno's listener-wide server (`serveHttpOnListener`, what `Deno.serve` runs) owns its
 * listener: the only way to stop it accepting is its shutdown, which also closes every
 * connection it accepted that has no request in flight yet, mid-handshake ones included (a
 * client that just sent its request gets a reset). Serving each connection on its own lets a
 * listener close while the connections it accepted live on, each until its client is done: a
 * listener replaced for new certificates (see `deno_listener.ts`) drops nothing it accepted.
 *
 * @module
 */

/** What Deno's per-connection HTTP server returns. */
interface ConnectionServer {
  shutdown(): Promise<void>;
  finished: Promise<void>;
}

/** `Deno[Deno.internal].serveHttpOnConnection`. */
export type ServeOnConnection = (
  conn: Deno.TlsConn,
  signal: AbortSignal | undefined,
  handler: (
    request: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ) => Response | Promise<Response>,
  onError: (e: unknown) => Response,
  onListen: () => void,
) => ConnectionServer;

/** The connections being served, whichever listener accepted them. */
export class ConnectionSet {
  #servers = new Set<ConnectionServer>();

  /** Connections open right now. */
  get size(): number {
    return this.#servers.size;
  }

  /** Serves `conn` until it closes. */
  serve(
    serveOn: ServeOnConnection,
    conn: Deno.TlsConn,
    handler: Parameters<ServeOnConnection>[2],
    onError: (e: unknown) => Response,
  ): void {
    let server: ConnectionServer;
    try {
      // no abort signal: Deno adds a listener to it per connection and never removes it
      server = serveOn(conn, undefined, handler, onError, () => {});
    } catch {
      try {
        conn.close();
      } catch { /* closed */ }
      return;
    }
    this.#servers.add(server);
    // a connection that ends badly (reset, failed handshake) is the client's business
    server.finished.catch(() => {}).finally(() => this.#servers.delete(server));
  }

  /**
   * Shuts every connection down: requests in flight finish, idle connections close (HTTP/2
   * clients get a GOAWAY). Resolves when all are closed.
   */
  async shutdown(): Promise<void> {
    const all = [...this.#servers];
    await Promise.all(all.map((s) => s.shutdown().catch(() => {})));
    await Promise.all(all.map((s) => s.finished.catch(() => {})));
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
 * Accepts connections on `listener` and hands each to `onConnection`.
 *
 * @example
 * ```ts ignore
 * const loop = acceptLoop(Deno.listenTls(opts), (conn) => set.serve(serveOn, conn, handler, onError));
 * await loop.close(true);
 * ```
 */
export function acceptLoop(
  listener: Deno.TlsListener,
  onConnection: (conn: Deno.TlsConn) => void,
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
      let conn: Deno.TlsConn;
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
