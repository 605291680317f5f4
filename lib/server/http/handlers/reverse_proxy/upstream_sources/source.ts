/**
 * What every dynamic upstream source gives: the dial addresses for a request, looked up again
 * once `refresh` has passed, from a small cache keyed by the rendered name (at most 100
 * names, as Caddy keeps).
 *
 * @module
 */
import type { RequestContext } from "../../../context.ts";

/** A module of `http.reverse_proxy.upstreams` (`a`, `srv`, `multi`). */
export interface UpstreamSource {
  /** The dial addresses for a request; throws when none can be found. */
  dials(c: RequestContext): Promise<string[]>;
  /** Forgets the cached answer for this request's name (a retry after a failure). */
  resetCache?(c: RequestContext): void;
}

/** Most names a source keeps answers for. */
export const MAX_CACHED = 100;

/** One cached answer. */
export interface Cached {
  /** Dial addresses. */
  dials: string[];
  /** When it counts from (ms since the epoch); may be set ahead for a grace period. */
  freshness: number;
}

/** A bounded cache of answers by name. */
export class AnswerCache {
  #map = new Map<string, Cached>();

  /** Answers kept for `refreshMs` after they were looked up. */
  constructor(readonly refreshMs: number) {}

  /** The answer for `key` while it is fresh, else undefined. */
  fresh(key: string): Cached | undefined {
    const c = this.#map.get(key);
    return c && Date.now() - c.freshness < this.refreshMs ? c : undefined;
  }

  /** The answer for `key`, fresh or not. */
  any(key: string): Cached | undefined {
    return this.#map.get(key);
  }

  /** Stores an answer (dropping one other name when the cache is full). */
  set(key: string, value: Cached): void {
    if (!this.#map.has(key) && this.#map.size >= MAX_CACHED) {
      this.#map.delete(this.#map.keys().next().value!);
    }
    this.#map.set(key, value);
  }

  /** Forgets `key`. */
  delete(key: string): void {
    this.#map.delete(key);
  }
}

/** Joins a host and port into a dial address (IPv6 in brackets). */
export function joinHostPort(host: string, port: string | number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
