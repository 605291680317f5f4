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
 * Most such connections never upgrade, so a connection can be handed back after its first
 * request ({@linkcode UpgradeRelay.relay}'s `handBack`): when the first bytes it sent are one
 * whole request head that asks for no upgrade and has no body (see {@linkcode loneHead}),
 * nothing more is read from the client until that request's answer is complete (for at most
 * {@linkcode FIRST_MS}: a longer answer, a stream, is relayed on as any other); the relay then
 * ends its loopback connection (a FIN once the answer is written, which the loopback server
 * answers by closing), copies the answer's last bytes, and the client's connection, with no
 * byte of the next request read, goes to be served directly. Its later requests cost what any
 * directly served connection's cost; a WebSocket asked for on a later request of such a
 * connection cannot be granted (browsers and WebSocket clients open a new connection for one).
 *
 * @module
 */
import { copy, pump } from "./relay.ts";

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
  /** Closed (or closing) for good: it is not handed back. */
  closed: boolean;
  /** Told how the first request ended, when the connection may be handed back after it. */
  onFirst?: (end: FirstEnd) => void;
}

/** How a relayed connection's first request ended. */
interface FirstEnd {
  /** Its answer is complete on the loopback connection. */
  ok: boolean;
  /** The answer ends the connection (`Connection: close`) or switched protocols. */
  last: boolean;
}

/**
 * True when `bytes` are exactly one whole HTTP/1.1 request head (through its blank line) with
 * no body (neither `Content-Length` nor `Transfer-Encoding`), no `Upgrade` field and no
 * `Connection: close`: its connection can be handed back once it is answered, with nothing of
 * the client's read past it.
 *
 * @example
 * ```ts
 * import { loneHead } from "./upgrade_relay.ts";
 * const enc = (s: string) => new TextEncoder().encode(s);
 * loneHead(enc("GET / HTTP/1.1\r\nHost: a\r\n\r\n")); // true
 * loneHead(enc("GET / HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n")); // false
 * ```
 */
export function loneHead(bytes: Uint8Array): boolean {
  const n = bytes.length;
  if (n < 18 || bytes[n - 4] !== 13 || bytes[n - 3] !== 10 || bytes[n - 2] !== 13) return false;
  if (bytes[n - 1] !== 10) return false;
  const text = LATIN1.decode(bytes);
  // one head: its blank line is the first one
  if (text.indexOf("\r\n\r\n") !== n - 4) return false;
  const line = text.indexOf("\r\n");
  if (!text.slice(0, line).endsWith(" HTTP/1.1")) return false;
  const fields = line + 2 < n - 4 ? text.slice(line + 2, n - 4).split("\r\n") : [];
  for (const field of fields) {
    const colon = field.indexOf(":");
    if (colon <= 0) return false;
    const name = field.slice(0, colon).trimEnd().toLowerCase();
    if (
      name === "content-length" || name === "transfer-encoding" || name === "upgrade" ||
      name === "expect"
    ) return false;
    if (name === "connection" && /(^|[\s,])close($|[\s,])/i.test(field.slice(colon + 1))) {
      return false;
    }
  }
  return true;
}

const LATIN1 = new TextDecoder("latin1");

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
      const first = e.onFirst;
      e.onFirst = undefined;
      let last = false;
      if (first) {
        completed.then(() => first({ ok: true, last }), () => first({ ok: false, last }));
      }
      const res = e.handle(request, { completed });
      const mark = (r: Response) => {
        if (r.status === 101) e.upgraded = true;
        last = r.status === 101 ||
          /(^|[\s,])close($|[\s,])/i.test(r.headers.get("connection") ?? "");
        return r;
      };
      return res instanceof Response ? mark(res) : res.then(mark);
    });
  }

  /**
   * Relays `conn` (a TLS connection after its handshake, or a cleartext one) until either
   * side closes; its requests are answered by `handle`. Null when the relay is closed. A
   * connection whose first request needs no relay (see {@linkcode loneHead}) is given to
   * `handBack` once that request is answered, instead of being relayed on (see the module's
   * documentation); `done` then resolves as it is handed back.
   */
  async relay(
    conn: Deno.Conn,
    handle: RelayHandler,
    handBack: (conn: Deno.Conn) => void,
  ): Promise<Relayed | null> {
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
      entry.closed = true;
      closeQuietly(conn);
      closeQuietly(inner);
    };
    let doneWith!: () => void;
    const entry: Entry = {
      handle,
      inflight: 0,
      closeWhenIdle: false,
      upgraded: false,
      closed: false,
      close,
      closeIdle() {
        if (entry.inflight === 0) close();
        else entry.closeWhenIdle = true;
      },
      done: new Promise<void>((resolve) => (doneWith = resolve)),
    };
    this.#entries.set(key, entry);
    const finish = () => {
      close();
      this.#entries.delete(key);
      doneWith();
    };
    this.#firstThenHandBack(conn, inner, entry, handBack).then((handed) => {
      if (!handed) return finish();
      this.#entries.delete(key);
      doneWith();
    });
    return entry;
  }

  /**
   * Relays `conn`'s first bytes; when they are a lone head (see {@linkcode loneHead}), waits
   * for its answer, ends the loopback connection and hands `conn` back (true); else relays on
   * until either side closes (false).
   */
  async #firstThenHandBack(
    conn: Deno.Conn,
    inner: Deno.TcpConn,
    entry: Entry,
    handBack: (conn: Deno.Conn) => void,
  ): Promise<boolean> {
    const buf = new Uint8Array(16 * 1024); // a whole head in the first read
    let n: number | null;
    try {
      n = await conn.read(buf);
      if (n === null) return false;
      const first = buf.subarray(0, n);
      const lone = loneHead(first);
      let ended: Promise<FirstEnd> | undefined;
      if (lone) ended = new Promise((resolve) => (entry.onFirst = resolve));
      for (let off = 0; off < n;) off += await inner.write(first.subarray(off));
      if (!ended) {
        // an upgrade, a body or more than one head: relayed to the end
        await Promise.allSettled([pump(conn, inner, buf), pump(inner, conn)]);
        return false;
      }
      // nothing more is read from the client until the answer is out, for a while
      const back = copy(inner, conn);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const end = await Promise.race([
        ended,
        back.then((): FirstEnd => ({ ok: false, last: true })),
        new Promise<"slow">((resolve) => (timer = setTimeout(() => resolve("slow"), FIRST_MS))),
      ]);
      clearTimeout(timer);
      if (end === "slow") {
        // a long answer (a stream, a long poll): relayed on, so that a client that leaves
        // meanwhile is seen leaving
        await Promise.allSettled([pump(conn, inner, buf), back]);
        return false;
      }
      // a failed answer: the connection goes
      if (!end.ok) return false;
      if (end.last || entry.closed || this.#closed) {
        // the answer's last bytes still reach the client: the loopback server closes its side
        // after an answer that ends the connection, and a closing relay after its answers
        await back;
        return false;
      }
      // the answer is all on the loopback connection: its end makes the server close it
      await inner.closeWrite().catch(() => {});
      const copied = await back;
      if (!copied || entry.closed || this.#closed || entry.inflight > 0) return false;
      closeQuietly(inner);
      handBack(conn);
      return true;
    } catch {
      return false;
    }
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

/**
 * How long a relayed connection's first answer may take for the connection to be handed back
 * after it (ms): the client is not read meanwhile, so one that leaves would not be seen.
 */
export const FIRST_MS = 1000;

function closeQuietly(c: Deno.Conn): void {
  try {
    c.close();
  } catch { /* closed */ }
}
