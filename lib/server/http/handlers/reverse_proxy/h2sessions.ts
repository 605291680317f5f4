/**
 * The HTTP/2 connections (`node:http2` sessions) of the HTTP/2 upstream client, per upstream
 * address, kept as Go's transport keeps them (Caddy's `http` transport with `versions` `2` or
 * `h2c`):
 *
 * - a request goes on a session with a free stream (under the upstream's
 *   `MAX_CONCURRENT_STREAMS`: a session is used once its SETTINGS arrived); when every session is
 *   full, another is opened — at most `max_conns_per_host` of them (dialing ones included),
 *   beyond which requests wait for a stream;
 * - `keep_alive.enabled: false`: each session serves one request and closes after it;
 * - `keep_alive.idle_timeout` (default 2m, 0: never): a session with no stream open for that
 *   long is closed;
 * - `max_response_header_size`: announced as `SETTINGS_MAX_HEADER_LIST_SIZE` (plus 320 bytes,
 *   as Go) and enforced: a longer response head fails the request.
 *
 * A request waiting for a stream takes none once its client has left (a stream reset while
 * still queued in a session could reach the upstream afterwards, and stay open there).
 *
 * @module
 */
import type http2 from "node:http2";
import { DialError } from "./transport.ts";

/** How sessions are kept; Go's defaults when absent. */
export interface H2Limits {
  /** `max_conns_per_host` (0 or absent: no limit). */
  maxConnsPerHost?: number;
  /** `keep_alive.enabled` (false: a session per request). */
  keepAlive?: boolean;
  /** `keep_alive.idle_timeout` (ms; default 2m, 0: never). */
  idleTimeoutMs?: number;
  /** `max_response_header_size` (bytes; node's default when absent). */
  maxHeaderBytes?: number;
}

/** Streams per connection when the upstream's SETTINGS name no limit (Go's default). */
const INITIAL_MAX_STREAMS = 100;
const DEFAULT_IDLE_TIMEOUT_MS = 2 * 60_000;

/** One session (or one being connected) and its streams. */
interface Entry {
  session: http2.ClientHttp2Session | null;
  /** Streams open on it (or promised to requests while it connects). */
  open: number;
  /** It served a request (single-use sessions take no other). */
  used: boolean;
  /** No new streams: closing, GOAWAY received, or failed. */
  draining: boolean;
  idle?: ReturnType<typeof setTimeout>;
}

interface Host {
  entries: Entry[];
  /** Requests waiting for a change (a session up, a stream or session closed). */
  wake: (() => void)[];
}

/** A stream slot taken on a session; `release` when the stream closed. */
export interface Lease {
  session: http2.ClientHttp2Session;
  release(): void;
}

/** The sessions of one client, by upstream address. */
export class H2Sessions {
  #hosts = new Map<string, Host>();
  #closed = false;
  #limits: Required<Omit<H2Limits, "maxHeaderBytes">>;

  /** `connect` opens a session to an address (timeout in ms, 0: none). */
  constructor(
    readonly connect: (address: string, timeout: number) => Promise<http2.ClientHttp2Session>,
    limits: H2Limits = {},
  ) {
    this.#limits = {
      maxConnsPerHost: limits.maxConnsPerHost ?? 0,
      keepAlive: limits.keepAlive ?? true,
      idleTimeoutMs: limits.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    };
  }

  /** Closes every session (requests on them finish first). */
  close(): void {
    this.#closed = true;
    for (const h of this.#hosts.values()) {
      for (const e of h.entries) {
        clearTimeout(e.idle);
        e.draining = true;
        e.session?.close();
      }
      h.wake.splice(0).forEach((w) => w());
    }
    this.#hosts.clear();
  }

  #host(address: string): Host {
    let h = this.#hosts.get(address);
    if (!h) this.#hosts.set(address, h = { entries: [], wake: [] });
    return h;
  }

  #changed(h: Host): void {
    h.wake.splice(0).forEach((w) => w());
  }

  #remove(address: string, h: Host, e: Entry): void {
    clearTimeout(e.idle);
    e.draining = true;
    const i = h.entries.indexOf(e);
    if (i >= 0) h.entries.splice(i, 1);
    if (!h.entries.length && !h.wake.length && this.#hosts.get(address) === h) {
      this.#hosts.delete(address);
    }
    this.#changed(h);
  }

  #capacity(e: Entry): number {
    return e.session?.remoteSettings?.maxConcurrentStreams ?? INITIAL_MAX_STREAMS;
  }

  /**
   * Opens a session for `address`, counted at once (for `max_conns_per_host`); the promise
   * fails with the dial's error.
   */
  #open(
    address: string,
    h: Host,
    timeout: number,
    connect: (timeout: number) => Promise<http2.ClientHttp2Session>,
  ): Promise<void> {
    const e: Entry = { session: null, open: 0, used: false, draining: false };
    h.entries.push(e);
    return connect(timeout).then((session) => {
      if (this.#closed || e.draining) {
        session.close();
        return;
      }
      e.session = session;
      const gone = () => this.#remove(address, h, e);
      session.once("close", gone);
      session.once("error", gone);
      session.once("goaway", () => {
        e.draining = true;
        this.#changed(h);
      });
      if (e.open === 0) this.#idle(address, h, e);
      this.#changed(h);
    }, (err) => {
      this.#remove(address, h, e);
      throw err;
    });
  }

  #idle(address: string, h: Host, e: Entry): void {
    clearTimeout(e.idle);
    const ms = this.#limits.idleTimeoutMs;
    if (ms <= 0 || !e.session) return;
    e.idle = setTimeout(() => {
      if (e.open !== 0) return;
      e.draining = true;
      e.session?.close();
      this.#remove(address, h, e);
    }, ms);
  }

  /**
   * A stream slot on a session to `address`: one with room, else a new session when
   * `max_conns_per_host` allows (opened with `connect`, by default the constructor's for
   * `address`; `address` is then a key such as a PROXY client's), else the next one freed.
   * Null when the client left first (`clientDone` settled); a dial failure is thrown.
   */
  async acquire(
    address: string,
    timeout: number,
    clientDone?: Promise<unknown>,
    connect: (timeout: number) => Promise<http2.ClientHttp2Session> = (t) =>
      this.connect(address, t),
  ): Promise<Lease | null> {
    const h = this.#host(address);
    const left = clientDone?.then(() => true, () => true);
    const { keepAlive, maxConnsPerHost } = this.#limits;
    // the session this request opened: its dial failure is this request's
    let mine: Promise<boolean> | null = null;
    const dialing: { state: "dialing" | "up" | "failed"; error?: unknown } = { state: "up" };
    for (;;) {
      if (this.#closed) throw new DialError("the proxy's upstream client was closed");
      const free = h.entries.find((e) =>
        e.session && !e.draining && !e.session.closed && !e.session.destroyed &&
        (keepAlive ? e.open < this.#capacity(e) : !e.used)
      );
      if (free) return this.#take(address, h, free);
      const connecting = h.entries.some((e) => !e.session && !e.draining);
      const room = maxConnsPerHost <= 0 || h.entries.length < maxConnsPerHost;
      if (mine === null && room && (!connecting || !keepAlive)) {
        dialing.state = "dialing";
        mine = this.#open(address, h, timeout, connect).then(() => {
          dialing.state = "up";
          return false;
        }, (e) => {
          dialing.state = "failed";
          dialing.error = e;
          return false;
        });
      }
      let wake!: () => void;
      const turn = new Promise<boolean>((r) => (wake = () => r(false)));
      h.wake.push(wake);
      const waits: Promise<boolean>[] = [turn];
      if (left) waits.push(left);
      if (mine) waits.push(mine);
      const gone = await Promise.race(waits);
      if (dialing.state === "failed") {
        const i = h.wake.indexOf(wake);
        if (i >= 0) h.wake.splice(i, 1);
        throw dialing.error;
      }
      // once up, the session is anyone's: a later turn may open another if this one is taken
      if (dialing.state === "up") mine = null;
      if (gone) {
        const i = h.wake.indexOf(wake);
        if (i >= 0) h.wake.splice(i, 1);
        return null;
      }
    }
  }

  #take(address: string, h: Host, e: Entry): Lease {
    clearTimeout(e.idle);
    e.open++;
    e.used = true;
    let released = false;
    return {
      session: e.session!,
      release: () => {
        if (released) return;
        released = true;
        e.open--;
        if (!this.#limits.keepAlive) {
          // a single-use session closes once its one stream is done
          e.draining = true;
          e.session?.close();
        } else if (e.open === 0) this.#idle(address, h, e);
        this.#changed(h);
      },
    };
  }
}
