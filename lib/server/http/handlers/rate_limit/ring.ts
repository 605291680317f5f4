/**
 * One rate limiter: the sliding window of caddy-ratelimit's `ringBufferRateLimiter`
 * (`ringbuffer.go`). The plugin's ring holds the times of the last `maxEvents` allowed events,
 * the cursor at the oldest; an event is allowed when its oldest event left the window
 * (`now - oldest > window`), and then takes the oldest slot. A refused event takes nothing,
 * and the wait until the next allowed one is `oldest + window - now`.
 *
 * Where the plugin allocates the whole ring at once (zero times standing for free slots), this
 * limiter keeps only the events still in the window, oldest first: the decisions are the same
 * (the oldest of the last `maxEvents` events left the window exactly when fewer than
 * `maxEvents` are in it), a key that sent one request holds one number, so a zone keyed by
 * something a client chooses cannot make the server allocate `maxEvents` slots per made-up
 * key, and a limiter never holds more than the events of one window.
 *
 * Times are wall-clock milliseconds (`Date.now()`), so that counts can be shared with other
 * instances (`distributed.ts`).
 *
 * @module
 */

/** A sliding-window limiter of `maxEvents` events per `windowMs`. */
export class RingLimiter {
  /** Event times, oldest first, from `#head` on (the ones before it are gone). */
  #t: number[] = [];
  #head = 0;
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

  /** Forgets the events that left the window ending at `now` (older than `now - window`). */
  #expire(now: number): void {
    const t = this.#t;
    const start = now - this.#window;
    let h = this.#head;
    while (h < t.length && t[h] < start) h++;
    this.#head = h;
    if (h > 64 && h * 2 > t.length) {
      this.#t = t.slice(h);
      this.#head = 0;
    }
  }

  /**
   * 0 when an event is allowed now (and then it is counted), else the time in ms until the
   * next one would be (nothing is counted). The plugin's `When`: its ring holds the last
   * `maxEvents` events, and one is allowed when the oldest of them left the window, which is
   * when fewer than `maxEvents` events are in the window.
   */
  when(now: number): number {
    this.#expire(now);
    if (this.#t.length - this.#head < this.#max) {
      this.#t.push(now);
      return 0;
    }
    return this.#t[this.#head] + this.#window - now;
  }

  /** Counts an event at `now` (the oldest is forgotten when `maxEvents` are held). */
  reserve(now: number): void {
    this.#expire(now);
    this.#t.push(now);
    if (this.#t.length - this.#head > this.#max) this.#head++;
  }

  /**
   * Events inside the window ending at `ref`, and the time of the oldest of them (0 when
   * none): what the plugin's `Count` gives the distributed state.
   */
  count(ref: number): [number, number] {
    const t = this.#t;
    const start = ref - this.#window;
    let i = t.length;
    while (i > this.#head && t[i - 1] >= start) i--;
    const n = t.length - i;
    return n === 0 ? [0, 0] : [n, t[i]];
  }

  /** The newest event's time (0 when none). */
  newest(): number {
    return this.#t.length > this.#head ? this.#t[this.#t.length - 1] : 0;
  }

  /**
   * Changes the events allowed per window (the plugin's `SetMaxEvents`): a lower limit forgets
   * the oldest events, a higher one has room for more at once.
   */
  setMaxEvents(maxEvents: number): void {
    const held = this.#t.length - this.#head;
    if (held > maxEvents) this.#head += held - maxEvents;
    this.#max = maxEvents;
  }

  /** Changes the window (the plugin's `SetWindow`). */
  setWindow(windowMs: number): void {
    this.#window = windowMs;
  }
}
