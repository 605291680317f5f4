/**
 * Connection limits on the `deno` engine (`read_header_timeout`, `read_timeout`,
 * `write_timeout`, `idle_timeout`, `max_header_bytes`), kept from the handler's view of each
 * connection: Deno's HTTP server (`serveHttpOnConnection`, one per connection, see
 * `accept.ts`) owns the socket and its bytes, but each connection's requests come through
 * its own handler, so the listener knows when the connection was accepted, when each request
 * head was complete (its handler was called), when its response was done (`completed`) and
 * whether its body has ended. One sweep per listener (a timer every eighth of the shortest
 * limit, between 10 ms and 1 s, while connections are open) closes the connections past a
 * limit; nothing runs per request but two clock reads and a few counters.
 *
 * - `read_header_timeout` (else `read_timeout`): the first request's head must be complete
 *   within it of the accept (for TLS, the handshake included, as in Go); the connection is
 *   then closed without an answer, as Go does.
 * - `idle_timeout`: a kept-alive connection with no request in flight is closed that long
 *   after its last response. A request that starts arriving during that wait cannot be told
 *   from silence (the bytes are Deno's), so the head of a later request must be complete
 *   within `idle_timeout` of the previous response (Go: `idle_timeout` to its first byte,
 *   then `read_header_timeout`).
 * - `read_timeout`: a request body still arriving that long after its head is cut.
 * - `write_timeout`: a response not done that long after its request head is cut.
 * - `max_header_bytes`: a request whose request line and fields are longer gets `431` and the
 *   connection closes after it. Deno's parser refuses heads over 64 KiB itself (`400`), so a
 *   larger limit needs the `node` engine (chosen automatically).
 *
 * A connection that switched protocols (a `101` answer: WebSocket) leaves every limit, as a
 * hijacked connection does in Go.
 *
 * @module
 */
import type { ConnectionOptions } from "../../module/listener.ts";

/** The longest request head Deno's HTTP/1.1 parser accepts (bytes); it answers 400 beyond. */
export const DENO_MAX_HEAD_BYTES = 64 * 1024;

/** Shortest and longest time between two sweeps (ms). */
export const SWEEP_MIN_MS = 10;
/** See {@link SWEEP_MIN_MS}. */
export const SWEEP_MAX_MS = 1000;

/** The limits one connection is held to (ms; 0: none). */
export interface Limits {
  /** Accept to the end of the first request head. */
  headerMs: number;
  /** Request head to the end of its body. */
  readMs: number;
  /** Request head to the end of its response. */
  writeMs: number;
  /** End of a response to the next request head. */
  idleMs: number;
  /** Longest request head (bytes); 0: Deno's own limit only. */
  maxHeaderBytes: number;
}

/**
 * The limits of a listener's connection options; null when none applies (the default
 * `max_header_bytes`, above Deno's own limit, needs no check).
 *
 * @example
 * ```ts
 * import { limitsOf } from "./limits.ts";
 * import { DEFAULT_CONNECTION_OPTIONS } from "../../module/listener.ts";
 * limitsOf({ ...DEFAULT_CONNECTION_OPTIONS, readHeaderTimeoutMs: 1000 })?.headerMs; // 1000
 * ```
 */
export function limitsOf(c: ConnectionOptions): Limits | null {
  const headerMs = c.readHeaderTimeoutMs || c.readTimeoutMs;
  const maxHeaderBytes = c.maxHeaderBytes < DENO_MAX_HEAD_BYTES ? c.maxHeaderBytes : 0;
  if (!headerMs && !c.readTimeoutMs && !c.writeTimeoutMs && !c.idleTimeoutMs && !maxHeaderBytes) {
    return null;
  }
  return {
    headerMs,
    readMs: c.readTimeoutMs,
    writeMs: c.writeTimeoutMs,
    idleMs: c.idleTimeoutMs,
    maxHeaderBytes,
  };
}

/** How a watched connection is closed. */
export interface Closer {
  /** Closes it when no request is in flight, else after the current response (FIN). */
  close(): void;
  /** Cuts it now, requests in flight included. */
  abort(): void;
}

/** A request in flight on a watched connection. */
interface InFlight {
  /** When its head was complete (its handler was called). */
  start: number;
  /** Its body is still arriving (only tracked under `read_timeout`). */
  body: boolean;
}

/** One connection under watch. */
export class Watched {
  /** Requests in flight. */
  inflight = 0;
  /** Requests seen. */
  served = 0;
  /** The accept, or the end of the last response. */
  since: number;
  /** Switched protocols (WebSocket): no limit applies any more. */
  upgraded = false;
  /** Closing or closed: the sweep leaves it alone. */
  closing = false;
  /** The requests in flight, when a read or write limit needs their times. */
  readonly requests: Set<InFlight> | null;

  constructor(readonly limits: Limits, readonly closer: Closer, now: number) {
    this.since = now;
    this.requests = limits.readMs || limits.writeMs ? new Set() : null;
  }

  /**
   * What the sweep does to this connection at `now`: nothing, `close` (graceful) or `abort`.
   */
  verdict(now: number): "keep" | "close" | "abort" {
    if (this.upgraded || this.closing) return "keep";
    const l = this.limits;
    if (this.inflight === 0) {
      const wait = this.served === 0 ? l.headerMs : l.idleMs;
      return wait > 0 && now - this.since >= wait ? "close" : "keep";
    }
    if (this.requests) {
      for (const r of this.requests) {
        if (l.writeMs > 0 && now - r.start >= l.writeMs) return "abort";
        if (l.readMs > 0 && r.body && now - r.start >= l.readMs) return "abort";
      }
    }
    return "keep";
  }
}

/** The connections of one listener under watch, and their sweep. */
export class ConnectionWatch {
  #all = new Set<Watched>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #interval = SWEEP_MAX_MS;

  /** Connections under watch. */
  get size(): number {
    return this.#all.size;
  }

  /** Starts watching a connection accepted at `since` (`performance.now()`; default now). */
  add(limits: Limits, since: number | undefined, closer: Closer): Watched {
    const w = new Watched(limits, closer, since ?? performance.now());
    this.#all.add(w);
    const interval = sweepInterval(limits);
    if (this.#timer === undefined || interval < this.#interval) {
      if (this.#timer !== undefined) clearInterval(this.#timer);
      this.#interval = interval;
      const timer = setInterval(() => this.sweep(performance.now()), interval);
      Deno.unrefTimer(timer);
      this.#timer = timer;
    }
    return w;
  }

  /** Stops watching a connection (it closed). */
  remove(w: Watched): void {
    this.#all.delete(w);
    if (this.#all.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#interval = SWEEP_MAX_MS;
    }
  }

  /** Closes the connections past a limit at `now`. */
  sweep(now: number): void {
    for (const w of this.#all) {
      const v = w.verdict(now);
      if (v === "keep") continue;
      w.closing = true;
      if (v === "close") w.closer.close();
      else w.closer.abort();
    }
  }
}

/** An eighth of the shortest limit, between {@link SWEEP_MIN_MS} and {@link SWEEP_MAX_MS}. */
export function sweepInterval(l: Limits): number {
  const times = [l.headerMs, l.readMs, l.writeMs, l.idleMs].filter((t) => t > 0);
  if (!times.length) return SWEEP_MAX_MS;
  return Math.min(SWEEP_MAX_MS, Math.max(SWEEP_MIN_MS, Math.floor(Math.min(...times) / 8)));
}

/**
 * The length of a request's head as it came: request line and header fields, each line with
 * its CRLF (what Go's `MaxHeaderBytes` and node's `maxHeaderSize` bound).
 *
 * @example
 * ```ts
 * import { headLength } from "./limits.ts";
 * headLength(new Request("http://a/x", { headers: { host: "a" } })); // 27
 * ```
 */
export function headLength(req: Request): number {
  const url = req.url;
  const path = url.indexOf("/", url.indexOf("//") + 2);
  // "GET /x HTTP/1.1\r\n"
  let n = req.method.length + 1 + (path < 0 ? 1 : url.length - path) + 11;
  for (const [k, v] of req.headers) n += k.length + v.length + 4;
  return n + 2;
}

const TOO_LARGE = "431 Request Header Fields Too Large";

/** The answer to a head over `max_header_bytes` (as Go's). */
export function headTooLarge(): Response {
  return new Response(TOO_LARGE, {
    status: 431,
    headers: { "content-type": "text/plain; charset=utf-8", connection: "close" },
  });
}

/**
 * A handler that keeps `w`'s account of requests in flight around `handler`: when each one
 * starts and completes, whether its body has ended (under `read_timeout`), whether it switched
 * protocols, and `max_header_bytes`.
 *
 * @example
 * ```ts ignore
 * const h = watchedHandler(watched, (req, completed) => dispatch(req, completed));
 * ```
 */
export function watchedHandler(
  w: Watched,
  handler: (req: Request, completed: Promise<void> | undefined) => Response | Promise<Response>,
): (req: Request, info: { completed?: Promise<void> }) => Response | Promise<Response> {
  const l = w.limits;
  return (req, info) => {
    const now = performance.now();
    const first = w.served === 0;
    w.served++;
    w.inflight++;
    let entry: InFlight | undefined;
    if (w.requests) {
      // the first request's read deadline counts from the accept (Go: from its first byte)
      entry = { start: first && l.readMs ? w.since : now, body: false };
      w.requests.add(entry);
    }
    const completed = info.completed;
    const done = () => {
      w.inflight--;
      if (entry) w.requests!.delete(entry);
      if (w.inflight === 0) w.since = performance.now();
    };
    if (completed) completed.then(done, done);
    if (l.maxHeaderBytes && headLength(req) > l.maxHeaderBytes) {
      w.closing = true;
      // the connection ends after this answer: a graceful close waits for it
      queueMicrotask(() => w.closer.close());
      req.body?.cancel().catch(() => {});
      return headTooLarge();
    }
    if (entry && l.readMs && req.body) {
      entry.body = true;
      const e = entry;
      const body = req.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          flush() {
            e.body = false;
          },
        }),
      );
      req = new Request(req, { body, duplex: "half" } as RequestInit);
    }
    const res = handler(req, completed);
    // an upgrade that is accepted (101) takes the connection out of every limit
    if (req.headers.get("upgrade") === null) return res;
    const mark = (r: Response) => {
      if (r.status === 101) w.upgraded = true;
      return r;
    };
    return res instanceof Response ? mark(res) : res.then(mark);
  };
}
