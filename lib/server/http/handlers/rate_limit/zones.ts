/**
 * The zones' state, kept by zone name for as long as a loaded config names the zone (the
 * plugin's `rateLimits` usage pool): a config reload provisions the new handlers before the old
 * ones are cleaned up, so a zone the new config still has keeps its counts. A zone whose
 * events or window changed keeps them too, its limiters resized (the plugin's `updateAll`).
 *
 * @module
 */
import { RingLimiter } from "./ring.ts";

/** The limiters of one zone, by key. */
export class ZoneState {
  /** The zone's name. */
  readonly name: string;
  /** Its limiters by key. */
  readonly limiters: Map<string, RingLimiter> = new Map();
  #max: number;
  #window: number;
  /** Loaded handlers using it. */
  refs = 0;

  /** A zone allowing `maxEvents` per `windowMs` per key. */
  constructor(name: string, maxEvents: number, windowMs: number) {
    this.name = name;
    this.#max = maxEvents;
    this.#window = windowMs;
  }

  /** The key's limiter, made on first use. */
  limiter(key: string): RingLimiter {
    let l = this.limiters.get(key);
    if (l === undefined) {
      l = new RingLimiter(this.#max, this.#window);
      this.limiters.set(key, l);
    }
    return l;
  }

  /** Applies a (new) zone definition to the zone and every limiter it has. */
  update(maxEvents: number, windowMs: number): void {
    if (maxEvents === this.#max && windowMs === this.#window) return;
    this.#max = maxEvents;
    this.#window = windowMs;
    for (const l of this.limiters.values()) {
      l.setMaxEvents(maxEvents);
      l.setWindow(windowMs);
    }
  }

  /** Drops the limiters whose newest event left the window (the plugin's `sweep`). */
  sweep(now: number): void {
    for (const [key, l] of this.limiters) {
      if (l.newest() + l.window < now) this.limiters.delete(key);
    }
  }

  /** Each key's count and oldest event in the window ending at `now` (for the shared state). */
  snapshot(now: number): Record<string, [number, number]> {
    const out: Record<string, [number, number]> = {};
    for (const [key, l] of this.limiters) {
      const [count, oldest] = l.count(now);
      if (count > 0) out[key] = [count, oldest];
    }
    return out;
  }
}

const pool = new Map<string, ZoneState>();

/** Takes a reference to the state of zone `name`, made or updated to this definition. */
export function acquireZone(name: string, maxEvents: number, windowMs: number): ZoneState {
  let z = pool.get(name);
  if (z === undefined) pool.set(name, z = new ZoneState(name, maxEvents, windowMs));
  else z.update(maxEvents, windowMs);
  z.refs++;
  return z;
}

/** Drops a reference; the state is forgotten when no loaded config names the zone. */
export function releaseZone(z: ZoneState): void {
  z.refs--;
  if (z.refs <= 0 && pool.get(z.name) === z) pool.delete(z.name);
}

/** Every zone in use, by name (what a distributed instance writes to storage). */
export function allZones(): ReadonlyMap<string, ZoneState> {
  return pool;
}
