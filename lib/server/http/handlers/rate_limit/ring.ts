/**
 * One rate limiter: the sliding window of caddy-ratelimit's `ringBufferRateLimiter`
 * (`ringbuffer.go`). A ring holds the times of the last `maxEvents` allowed events, the cursor
 * at the oldest; an event is allowed when the ring is not full or its oldest event left the
 * window (`now - oldest > window`), and then takes the oldest slot. A refused event takes
 * nothing, and the wait until the next allowed one is `oldest + window - now`.
 *
 * Where the plugin allocates the whole ring at once (zero times standing for free slots), this
 * ring grows as events arrive, up to `maxEvents`: the decisions are the same, and a key that
 * sent one request holds one number, so a zone keyed by something a client chooses cannot
 * make the server allocate `maxEvents` slots per made-up key.
 *
 * Times are wall-clock milliseconds (`Date.now()`), so that counts can be shared with other
 * instances (`distributed.ts`).
 *
 * @module
 */

/** A sliding-window limiter of `maxEvents` events per `windowMs`. */
export class RingLimiter {
  #ring: number[] = [];
  /** Index of the oldest event once the ring is full (always 0 before). */
  #cursor = 0;
  #max: number;
  #window: number;

  /** A limiter allowing `maxEvents` (at least 1) per `windowMs`. */
  constructor(maxEvents: number, windowMs: number) {
    this.#max = maxEvents;
    this.#window = windowMs;
  }

  /** Events allowed per window. */
  get maxEvents(): number {
    return this.#max;
  }

  /** The window, in ms. */
  get window(): number {
    return this.#window;
  }

  /**
   * 0 when an event is allowed now (and then it is counted), else the time in ms until the
   * next one would be (nothing is counted). The plugin's `When`.
   */
  when(now: number): number {
    const ring = this.#ring;
    if (ring.length < this.#max) {
      ring.push(now);
      return 0;
    }
    const oldest = ring[this.#cursor];
    if (now - oldest > this.#window) {
      this.reserve(now);
      return 0;
    }
    return oldest + this.#window - now;
  }

  /** Counts an event at `now` (taking the oldest slot when the ring is full). */
  reserve(now: number): void {
    const ring = this.#ring;
    if (ring.length < this.#max) {
      ring.push(now);
      return;
    }
    ring[this.#cursor] = now;
    this.#cursor = this.#cursor + 1 === ring.length ? 0 : this.#cursor + 1;
  }

  /**
   * Events inside the window ending at `ref`, and the time of the oldest of them (0 when
   * none): what the plugin's `Count` gives the distributed state.
   */
  count(ref: number): [number, number] {
    const ring = this.#ring;
    const n = ring.length;
    const start = ref - this.#window;
    // newest first: the one before the cursor, wrapping around
    for (let i = 0; i < n; i++) {
      const at = ring[(this.#cursor + n - 1 - i) % n];
      if (at < start) return i === 0 ? [0, 0] : [i, ring[(this.#cursor + n - i) % n]];
    }
    return n === 0 ? [0, 0] : [n, ring[this.#cursor]];
  }

  /** The newest event's time (0 when none). */
  newest(): number {
    const n = this.#ring.length;
    return n === 0 ? 0 : this.#ring[(this.#cursor + n - 1) % n];
  }

  /** The events in order, oldest first. */
  #ordered(): number[] {
    const r = this.#ring;
    return this.#cursor === 0 ? r : [...r.slice(this.#cursor), ...r.slice(0, this.#cursor)];
  }

  /**
   * Changes the events allowed per window (the plugin's `SetMaxEvents`): a lower limit forgets
   * the oldest events, a higher one has room for more at once.
   */
  setMaxEvents(maxEvents: number): void {
    if (maxEvents === this.#max) return;
    const events = this.#ordered();
    this.#ring = events.length > maxEvents ? events.slice(events.length - maxEvents) : events;
    this.#cursor = 0;
    this.#max = maxEvents;
  }

  /** Changes the window (the plugin's `SetWindow`). */
  setWindow(windowMs: number): void {
    this.#window = windowMs;
  }
}
