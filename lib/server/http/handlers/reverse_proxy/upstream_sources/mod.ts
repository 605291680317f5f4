/**
 * Dynamic upstreams of `reverse_proxy` (`dynamic_upstreams`, modules
 * `http.reverse_proxy.upstreams.a`, `.srv` and `.multi`): the seam the proxy handler calls
 * while provisioning, and per attempt for the upstreams to choose from. Each dial address
 * becomes an `Upstream` in the global pool (listed by `/reverse_proxy/upstreams`, counted by
 * passive health checks and `max_requests`) for as long as lookups keep returning it. When a
 * lookup fails, the static `upstreams` are used instead, as Caddy does. Active health checks
 * do not run on dynamic upstreams (as in Caddy).
 *
 * @module
 */
import type { ProvisionContext } from "../../../../module/mod.ts";
import type { Logger } from "../../../../module/instance.ts";
import type { RequestContext } from "../../../context.ts";
import { releaseHost, Upstream } from "../upstreams.ts";
import { aSource } from "./a.ts";
import type { UpstreamSourceConfig } from "./config.ts";
import { multiSource } from "./multi.ts";
import type { UpstreamSource } from "./source.ts";
import { srvSource } from "./srv.ts";

export type { UpstreamSource } from "./source.ts";
export type { UpstreamSourceConfig } from "./config.ts";

/** Most upstreams a handler keeps from lookups before it forgets those not seen lately. */
const MAX_KEPT = 1000;

function makeSource(c: UpstreamSourceConfig, ctx: ProvisionContext): UpstreamSource {
  const log = (k: string): Logger => ctx.logger(`http.reverse_proxy.upstreams.${k}`);
  switch (c.source) {
    case "a":
      return aSource(c, log("a"));
    case "srv":
      return srvSource(c, log("srv"));
    case "multi":
      return multiSource(c, log("multi"), (s) => makeSource(s, ctx));
  }
}

/** A handler's dynamic upstreams. */
export interface DynamicUpstreams {
  /**
   * The upstreams for this attempt: looked up (or cached), or `fallback` when the lookup
   * failed. `retry` is true after a failed attempt (the cache is then refreshed).
   */
  upstreams(c: RequestContext, retry: boolean, fallback: Upstream[]): Promise<Upstream[]>;
  /** Releases the pooled hosts. */
  cleanup(): void;
}

/**
 * The dynamic upstreams of a decoded source.
 *
 * @example
 * ```ts ignore
 * const dyn = provisionDynamicUpstreams({ source: "a", name: "app.internal" }, ctx);
 * ```
 */
export function provisionDynamicUpstreams(
  config: UpstreamSourceConfig,
  ctx: ProvisionContext,
): DynamicUpstreams {
  const source = makeSource(config, ctx);
  const log = ctx.logger("http.handlers.reverse_proxy");
  const kept = new Map<string, Upstream>();
  return {
    async upstreams(c, retry, fallback) {
      if (retry) source.resetCache?.(c);
      let dials: string[];
      try {
        dials = await source.dials(c);
      } catch (e) {
        log.error("failed getting dynamic upstreams; falling back to static upstreams", {
          error: (e as Error)?.message ?? String(e),
        });
        return fallback;
      }
      if (kept.size > MAX_KEPT) {
        const now = new Set(dials);
        for (const [d, u] of kept) {
          if (!now.has(d)) {
            kept.delete(d);
            releaseHost(u.host);
          }
        }
      }
      return dials.map((d) => {
        let u = kept.get(d);
        if (!u) kept.set(d, u = new Upstream(d, 0));
        return u;
      });
    },
    cleanup() {
      for (const u of kept.values()) releaseHost(u.host);
      kept.clear();
    },
  };
}
