/**
 * Per-key rate limiting: a token bucket per API key. Default 120 requests of burst, refilled
 * at 2 per second (120 a minute sustained).
 *
 * @module
 */

/** Bucket settings. */
export interface RateLimitOptions {
  /** Bucket size: requests allowed in a burst (default 120). */
  burst?: number;
  /** Tokens added per second (default 2). */
  perSecond?: number;
}

/**
 * Token buckets keyed by a string (the API key id).
 *
 * @example
 * ```ts
 * import { RateLimiter } from "./rate_limit.ts";
 * const limiter = new RateLimiter({ burst: 1, perSecond: 1 });
 * console.log(limiter.take("k")); // 0 (allowed)
 * console.log(limiter.take("k") > 0); // true: seconds to wait
 * ```
 */
export class RateLimiter {
  /** Burst size. */
  readonly burst: number;
  /** Refill rate per second. */
  readonly perSecond: number;
  #buckets = new Map<string, { tokens: number; at: number }>();
  #now: () => number;

  /** Creates the limiter. */
  constructor(options: RateLimitOptions = {}, now: () => number = Date.now) {
    this.burst = options.burst ?? 120;
    this.perSecond = options.perSecond ?? 2;
    this.#now = now;
  }

  /** Takes one token for `key`: 0 when allowed, else whole seconds until one is available. */
  take(key: string): number {
    const now = this.#now();
    const b = this.#buckets.get(key) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    if (this.#buckets.size > 100_000) this.#buckets.clear();
    this.#buckets.set(key, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }
}
