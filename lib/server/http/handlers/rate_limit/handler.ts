/**
 * The `rate_limit` handler (caddy-ratelimit's `Handler.ServeHTTP`): for each zone whose
 * matchers match the request, the zone's key is rendered (placeholders), grouped by network
 * prefix when asked, and its limiter counts the event or refuses it. A refusal is a 429
 * handler error (the server's error routes see it; `{http.rate_limit.exceeded.name}` names
 * the zone) with `Retry-After` set to the seconds until the limiter has room, plus jitter.
 * Zones are checked from the most to the least permissive (events per window, as the
 * plugin's provision sorts them), so a request a short window refuses is not counted by a
 * longer one.
 *
 * @module
 */
import type { Logger } from "../../../module/instance.ts";
import type { ProvisionContext } from "../../../module/mod.ts";
import type { Storage } from "../../../module/storage.ts";
import type { ModuleInstance } from "../../../module/instance.ts";
import { durationMs } from "../../../config/duration.ts";
import type { RequestContext } from "../../context.ts";
import { errorResponse, HandlerError } from "../../errors.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import { compileMatcherSets, provisionMatcherSets } from "../../routes.ts";
import { DEFAULT_SWEEP_MS, DEFAULT_SYNC_MS, type RateLimitConfig } from "./config.ts";
import { ClusterView, localInstanceId } from "./distributed.ts";
import { networkKey } from "./prefix.ts";
import { acquireZone, releaseZone, ZoneState } from "./zones.ts";

/** One provisioned zone. */
interface Zone {
  name: string;
  match: ((c: RequestContext) => boolean) | null;
  key: Template;
  v4: number;
  v6: number;
  maxEvents: number;
  windowMs: number;
  state: ZoneState;
}

/** Go's `strconv.FormatFloat(x, 'f', 0, 64)`: the nearest integer, halves to even. */
function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** A provisioned `rate_limit` handler. */
export class RateLimit implements HttpHandler {
  readonly #zones: Zone[];
  readonly #jitter: number;
  readonly #logKey: boolean;
  readonly #log: Logger;
  readonly #cluster: ClusterView | null;
  readonly #timers: number[] = [];
  readonly #pooled: boolean;

  private constructor(
    zones: Zone[],
    c: RateLimitConfig,
    log: Logger,
    cluster: ClusterView | null,
    pooled: boolean,
  ) {
    this.#zones = zones;
    this.#jitter = c.jitter ?? 0;
    this.#logKey = c.log_key ?? false;
    this.#log = log;
    this.#cluster = cluster;
    this.#pooled = pooled;
  }

  /**
   * Settles a handler from its decoded config: the zones' matchers, their state (taken from
   * the zones pool unless the config is only validated), the storage of distributed counts
   * (read once before the first request), and the sweep and sync timers.
   */
  static async provision(c: RateLimitConfig, ctx: ProvisionContext): Promise<RateLimit> {
    const where = "http.handlers.rate_limit";
    const log = ctx.logger(where);
    const zones: Zone[] = [];
    const pooled = !ctx.validating;
    try {
      for (const [name, z] of Object.entries(c.rate_limits ?? {})) {
        const sets = await provisionMatcherSets(z.match, ctx, `${where}.rate_limits.${name}.match`);
        const maxEvents = z.max_events!;
        const windowMs = durationMs(z.window);
        zones.push({
          name,
          match: compileMatcherSets(sets),
          key: compileTemplate(z.key ?? ""),
          v4: z.ipv4_prefix ?? 0,
          v6: z.ipv6_prefix ?? 0,
          maxEvents,
          windowMs,
          state: pooled
            ? acquireZone(name, maxEvents, windowMs)
            : new ZoneState(name, maxEvents, windowMs),
        });
      }
    } catch (e) {
      if (pooled) { for (const z of zones) releaseZone(z.state); }
      throw e;
    }
    // most permissive first, names settling ties
    zones.sort((a, b) =>
      b.maxEvents / b.windowMs - a.maxEvents / a.windowMs || (a.name < b.name ? -1 : 1)
    );
    let cluster: ClusterView | null = null;
    let storage: Storage | null = null;
    if (c.distributed) {
      storage = c.storage
        ? await ctx.loadModule<Storage & ModuleInstance>("caddy.storage", "module", c.storage)
        : ctx.storage;
      if (!ctx.validating) {
        const purge = c.distributed.purge_age ? durationMs(c.distributed.purge_age) : 0;
        cluster = new ClusterView(storage, await localInstanceId(), purge, log);
        // the others' counts before the first decision
        await cluster.read().catch((e) =>
          log.error("gathering initial rate limiter states", { error: (e as Error).message })
        );
      }
    }
    const h = new RateLimit(zones, c, log, cluster, pooled);
    if (!ctx.validating) {
      h.#every(c.sweep_interval ? durationMs(c.sweep_interval) : DEFAULT_SWEEP_MS, () => {
        const now = Date.now();
        for (const z of zones) z.state.sweep(now);
      });
      if (cluster) {
        const d = c.distributed!;
        h.#every(
          d.read_interval ? durationMs(d.read_interval) : DEFAULT_SYNC_MS,
          () =>
            cluster.read().catch((e) =>
              log.error("syncing distributed limiter states", { error: (e as Error).message })
            ),
        );
        h.#every(
          d.write_interval ? durationMs(d.write_interval) : DEFAULT_SYNC_MS,
          () =>
            cluster.write().catch((e) =>
              log.error("distributing internal state", { error: (e as Error).message })
            ),
        );
      }
    }
    return h;
  }

  #every(ms: number, fn: () => unknown): void {
    let running = false;
    const t = setInterval(async () => {
      if (running) return;
      running = true;
      try {
        await fn();
      } finally {
        running = false;
      }
    }, ms) as unknown as number;
    Deno.unrefTimer(t);
    this.#timers.push(t);
  }

  serveHTTP(c: RequestContext, next: Next): Response | Promise<Response> {
    const zones = this.#zones;
    for (let i = 0; i < zones.length; i++) {
      const z = zones[i];
      if (z.match !== null && !z.match(c)) continue;
      let key = z.key.render(c);
      if (z.v4 !== 0 || z.v6 !== 0) key = networkKey(key, z.v4, z.v6);
      const limiter = z.state.limiter(key);
      const now = Date.now();
      let wait: number;
      if (this.#cluster === null) wait = limiter.when(now);
      else wait = this.#distributedWhen(z, key, now);
      if (wait > 0) return this.#exceeded(c, z, key, wait);
    }
    return next(c);
  }

  /**
   * The plugin's `distributedRateLimiting`: the others' last known counts plus this
   * instance's own; the event is counted here only when the total has room.
   */
  #distributedWhen(z: Zone, key: string, now: number): number {
    const limiter = z.state.limiter(key);
    const window = limiter.window;
    const [others, othersOldest] = this.#cluster!.counts(z.name, key, window, now);
    let oldest = othersOldest;
    // a refusal here is one whatever the wait (the plugin answers 429 even at 0)
    if (others >= limiter.maxEvents) return Math.max(oldest + window - now, 1);
    const [own, ownOldest] = limiter.count(now);
    if (ownOldest !== 0 && ownOldest < oldest && ownOldest > now - window) oldest = ownOldest;
    if (others + own < limiter.maxEvents) {
      limiter.reserve(now);
      return 0;
    }
    return Math.max(oldest + window - now, 1);
  }

  #exceeded(c: RequestContext, z: Zone, key: string, waitMs: number): Response {
    let wait = waitMs;
    if (this.#jitter > 0) wait += Math.random() * wait * this.#jitter;
    c.responseHeaders().set("Retry-After", String(roundHalfEven(wait / 1000 + 0.5)));
    if (this.#log.enabled("INFO")) {
      const fields: Record<string, unknown> = {
        zone: z.name,
        wait: wait / 1000,
        remote_ip: c.remoteHost,
      };
      if (this.#logKey) fields.key = key;
      this.#log.info("rate limit exceeded", fields);
    }
    c.setPlaceholder("http.rate_limit.exceeded.name", z.name);
    return errorResponse(new HandlerError(429, "rate limit exceeded", "rate_limit"));
  }

  /** Stops the timers and lets go of the zones' state. */
  cleanup(): void {
    for (const t of this.#timers.splice(0)) clearInterval(t);
    if (this.#pooled) { for (const z of this.#zones) releaseZone(z.state); }
  }
}
