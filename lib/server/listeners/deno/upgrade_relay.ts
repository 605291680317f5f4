/**
 * HTTP/1.1 connections that may be upgraded (WebSocket through `reverse_proxy`) on the `deno`
 * engine.
 *
 * Each connection is served by its own instance of Deno's HTTP server (see `accept.ts`),
 * which ends when hyper lets go of the connection: an upgraded connection goes down with it
 * (the upgraded socket fails with "Failed to send frame"). Deno's listener-wide server
 * (`Deno.serve`) keeps upgraded connections, but it owns its listener, and replacing the TLS
 * listener (new certificates) would then close kept-alive connections under their clients,
 * and the connection limits need each connection's requests.
 *
 * So, for a listener whose routes may upgrade: a TLS connection that negotiated HTTP/2 (which
 * has no upgrade) is served on its own as every other; one that speaks HTTP/1.1, and every
 * cleartext one, is relayed, its (decrypted) bytes both ways, to a cleartext `Deno.serve` on
 * loopback that lives as long as the listener's connection set, across its generations. That
 * server's handler is given the client's own address and the limits of the connection it came
 * on (see `accept.ts`): the relay's loopback port names the connection it carries. The relay
 * costs two loopback sockets and a copy each way per HTTP/1.1 connection on such listeners
 * only: measured (wrk over HTTPS, HTTP/1.1, 16 connections, one core, a `respond` route beside
 * the proxy's) 32 µs of CPU per request against 11 on the same server without a
 * `reverse_proxy` route.
 *
 * @module
 */
import { pump } from "./relay.ts";

/** Answers one request of a relayed connection (Deno's handler shape). */
export type RelayHandler = (
  request: Request,
  info: { completed?: Promise<void> },
) => Response | Promise<Response>;

/** One relayed connection. */
export interface Relayed {
  /** Closes both sides now. */
  close(): void;
  /** Closes both sides once no request is in flight (at once when none is). */
  closeIdle(): void;
  /** Resolves when both sides are closed. */
  readonly done: Promise<void>;
}

interface Entry extends Relayed {
  handle: RelayHandler;
  inflight: number;
  closeWhenIdle: boolean;
  /** Switched protocols (a 101 went out): the loopback server no longer sees it. */
  upgraded: boolean;
}

/** How long a stopping relay waits for its connections' last answers to reach them (ms). */
const FLUSH_MS = 5000;

/** The loopback server and the connections relayed to it. */
export class UpgradeRelay {
  readonly #onError: (e: unknown) => Response;
  #server?: Deno.HttpServer<Deno.NetAddr>;
  /** The relay's loopback port → the connection it carries. */
  readonly #entries = new Map<number, Entry>();
  #closed = false;

  constructor(onError: (e: unknown) => Response) {
    this.#onError = onError;
  }

  /** Connections being relayed now. */
  get size(): number {
    return this.#entries.size;
  }

  #open(): Deno.HttpServer<Deno.NetAddr> {
    return this.#server ??= Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen() {},
      onError: this.#onError,
    }, (request, info) => {
      const e = this.#entries.get(info.remoteAddr.port);
      if (!e) return new Response("421 Misdirected Request", { status: 421 });
      e.inflight++;
      const completed = info.completed;
      const done = () => {
        e.inflight--;
        if (e.inflight === 0 && e.closeWhenIdle) e.close();
      };
      completed.then(done, done);
      const res = e.handle(request, { completed });
      const mark = (r: Response) => {
        if (r.status === 101) e.upgraded = true;
        return r;
      };
      return res instanceof Response ? mark(res) : res.then(mark);
    });
  }

  /**
   * Relays `conn` (a TLS connection after its handshake, or a cleartext one) until either
   * side closes; its requests are answered by `handle`. Null when the relay is closed.
   */
  async relay(conn: Deno.Conn, handle: RelayHandler): Promise<Relayed | null> {
    if (this.#closed) {
      closeQuietly(conn);
      return null;
    }
    const server = this.#open();
    let inner: Deno.TcpConn;
    try {
      inner = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    } catch {
      closeQuietly(conn);
      return null;
    }
    const key = (inner.localAddr as Deno.NetAddr).port;
    const close = () => {
      closeQuietly(conn);
      closeQuietly(inner);
    };
    const entry: Entry = {
      handle,
      inflight: 0,
      closeWhenIdle: false,
      upgraded: false,
      close,
      closeIdle() {
        if (entry.inflight === 0) close();
        else entry.closeWhenIdle = true;
      },
      done: Promise.allSettled([pump(conn, inner), pump(inner, conn)]).then(() => {
        close();
        this.#entries.delete(key);
      }),
    };
    this.#entries.set(key, entry);
    return entry;
  }

  /**
   * Stops: the loopback server shuts down gracefully (requests in flight finish, then it closes
   * its side of each connection, whose last bytes the relay still copies to the client);
   * upgraded connections, which it no longer sees, are closed, and any other still open after
   * {@link FLUSH_MS}.
   */
  async shutdown(): Promise<void> {
    this.#closed = true;
    await this.#server?.shutdown().catch(() => {});
    const left = [...this.#entries.values()];
    for (const r of left) if (r.upgraded) r.close();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(left.map((r) => r.done)),
      new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          for (const r of left) r.close();
          resolve();
        }, FLUSH_MS);
      }),
    ]);
    clearTimeout(timer);
    await Promise.all(left.map((r) => r.done));
  }
}

function closeQuietly(c: Deno.Conn): void {
  try {
    c.close();
  } catch { /* closed */ }
}
