/**
 * The connections of the HTTP/1.1 upstream client, per upstream: idle ones kept for reuse
 * (`keep_alive`: `enabled`, `max_idle_conns_per_host`, `max_idle_conns`, `idle_timeout`) and
 * the count of open ones (`max_conns_per_host`: requests wait for a connection). A connection
 * that closes, wherever it is, is counted out (its `onClose`).
 *
 * @module
 */
import type { Conn } from "./h1conn.ts";
import { H1_LIMITS } from "./h1parse.ts";

/**
 * How the pool keeps connections (the transport's `keep_alive`, `max_conns_per_host`,
 * `max_response_header_size`); Caddy's defaults when absent.
 */
export interface PoolLimits {
  /** `keep_alive.enabled`: false closes each connection after its exchange. */
  keepAlive?: boolean;
  /** `keep_alive.max_idle_conns_per_host` (default 32). */
  maxIdlePerHost?: number;
  /** `keep_alive.max_idle_conns`: idle connections over all upstreams (0: no limit). */
  maxIdle?: number;
  /** `keep_alive.idle_timeout` (ms): an idle connection closes after it (default 2m; 0: never). */
  idleTimeoutMs?: number;
  /** `max_conns_per_host`: connections to one upstream at once, dialing ones included (0: no limit). */
  maxConnsPerHost?: number;
  /** `max_response_header_size` (bytes, default 64 KiB). */
  maxHeadBytes?: number;
}

/** Caddy's keep-alive defaults (its `http` transport's). */
const DEFAULT_IDLE_PER_HOST = 32;
const DEFAULT_IDLE_TIMEOUT_MS = 2 * 60_000;

export class ConnPool {
  #idle = new Map<string, Conn[]>();
  /**
   * Every idle connection, oldest first (a Map keeps insertion order), with the time it
   * closes unless taken (`performance.now()` ms): for `max_idle_conns` and `idle_timeout`.
   */
  #idleUntil = new Map<Conn, number>();
  /**
   * One timer for the whole pool (not one per parked connection: a timer per request cost
   * more than the rest of the pool's bookkeeping), due at the oldest idle connection's end.
   */
  #sweep: ReturnType<typeof setTimeout> | undefined;
  /** Open connections per upstream (dialing, busy or idle), counted for `max_conns_per_host`. */
  #open = new Map<string, number>();
  #waiting = new Map<string, (() => void)[]>();
  #closed = false;
  #limits: Required<PoolLimits>;

  /** A pool with these limits (Caddy's defaults for the ones left out). */
  constructor(limits: PoolLimits = {}) {
    this.#limits = {
      keepAlive: limits.keepAlive ?? true,
      maxIdlePerHost: limits.maxIdlePerHost ?? DEFAULT_IDLE_PER_HOST,
      maxIdle: limits.maxIdle ?? 0,
      idleTimeoutMs: limits.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      maxConnsPerHost: limits.maxConnsPerHost ?? 0,
      maxHeadBytes: limits.maxHeadBytes ?? H1_LIMITS.maxHeadBytes,
    };
  }

  /** Closes every idle connection; requests waiting for one go on (and dial). */
  close(): void {
    this.#closed = true;
    for (const list of this.#idle.values()) for (const c of [...list]) c.close();
    this.#idle.clear();
    clearTimeout(this.#sweep);
    this.#sweep = undefined;
    for (const wake of [...this.#waiting.values()].flat()) wake();
    this.#waiting.clear();
  }

  #unidle(dial: string, c: Conn): void {
    const l = this.#idle.get(dial);
    const i = l?.indexOf(c) ?? -1;
    if (i >= 0) l!.splice(i, 1);
    this.#idleUntil.delete(c);
    if (this.#idleUntil.size === 0 && this.#sweep !== undefined) {
      clearTimeout(this.#sweep);
      this.#sweep = undefined;
    }
  }

  /** Closes the idle connections past `idle_timeout`; due again at the next one's end. */
  #expire(): void {
    this.#sweep = undefined;
    const now = performance.now();
    for (const [c, until] of this.#idleUntil) {
      if (until > now) {
        if (until !== Infinity) this.#arm(until - now);
        return;
      }
      c.close(); // its onClose takes it out of the idle sets
      this.#idleUntil.delete(c);
    }
  }

  #arm(ms: number): void {
    this.#sweep ??= setTimeout(() => this.#expire(), Math.max(1, Math.ceil(ms)));
  }

  /** Takes a connection back after an exchange: parked for reuse, or closed. */
  release(dial: string, c: Conn): void {
    const lim = this.#limits;
    if (this.#closed || c.closed || c.buf.length || !lim.keepAlive) {
      c.close();
      return;
    }
    const list = this.#idle.get(dial) ?? [];
    if (list.length >= lim.maxIdlePerHost) {
      c.close();
      return;
    }
    list.push(c);
    this.#idle.set(dial, list);
    this.#idleUntil.set(
      c,
      lim.idleTimeoutMs > 0 ? performance.now() + lim.idleTimeoutMs : Infinity,
    );
    if (lim.maxIdle > 0 && this.#idleUntil.size > lim.maxIdle) {
      this.#idleUntil.keys().next().value!.close();
    }
    if (lim.idleTimeoutMs > 0) this.#arm(lim.idleTimeoutMs);
    c.park(() => this.#unidle(dial, c));
    this.#wake(dial);
  }

  #takeIdle(dial: string): Conn | undefined {
    const list = this.#idle.get(dial);
    while (list?.length) {
      const c = list[list.length - 1];
      this.#unidle(dial, c);
      if (c.unpark()) return c;
    }
    return undefined;
  }

  /** Lets one request waiting for a connection to `dial` go on. */
  #wake(dial: string): void {
    this.#waiting.get(dial)?.shift()?.();
  }

  /**
   * An idle connection to `dial` (unless `fresh`), or a new one from `open` when
   * `max_conns_per_host` allows, else waits until a connection is released or closed.
   */
  async acquire(dial: string, fresh: boolean, open: () => Promise<Conn>): Promise<Conn> {
    while (true) {
      const idle = fresh ? undefined : this.#takeIdle(dial);
      if (idle) return idle;
      const max = this.#limits.maxConnsPerHost;
      const count = this.#open.get(dial) ?? 0;
      if (max <= 0 || count < max || this.#closed) break;
      await new Promise<void>((r) => {
        const list = this.#waiting.get(dial) ?? [];
        list.push(r);
        this.#waiting.set(dial, list);
      });
    }
    this.#open.set(dial, (this.#open.get(dial) ?? 0) + 1);
    let c: Conn;
    try {
      c = await open();
    } catch (e) {
      this.#closedOne(dial);
      throw e;
    }
    c.onClose = () => {
      this.#unidle(dial, c);
      this.#closedOne(dial);
    };
    return c;
  }

  #closedOne(dial: string): void {
    const n = (this.#open.get(dial) ?? 1) - 1;
    if (n > 0) this.#open.set(dial, n);
    else this.#open.delete(dial);
    this.#wake(dial);
  }
}
