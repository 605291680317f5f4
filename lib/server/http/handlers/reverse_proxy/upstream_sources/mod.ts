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
import { asObject, optString, type Raw } from "../../../config.ts";
import type { RequestContext } from "../../../context.ts";
import { ConfigError } from "../../../../config/error.ts";
import { releaseHost, Upstream } from "../upstreams.ts";
import { aSource } from "./a.ts";
import { multiSource } from "./multi.ts";
import type { UpstreamSource } from "./source.ts";
import { srvSource } from "./srv.ts";

export type { UpstreamSource } from "./source.ts";

/** Most upstreams a handler keeps from lookups before it forgets those not seen lately. */
const MAX_KEPT = 1000;

function makeSource(raw: Raw, where: string, ctx: ProvisionContext): UpstreamSource {
  const kind = optString(raw, "source", where);
  const log = (k: string): Logger => ctx.logger(`http.reverse_proxy.upstreams.${k}`);
  switch (kind) {
    case "a":
      return aSource(raw, where, log("a"));
    case "srv":
      return srvSource(raw, where, log("srv"));
    case "multi":
      return multiSource(raw, where, log("multi"), (r, w) => makeSource(r, w, ctx));
    default:
      throw new ConfigError(
        "invalid_config",
        `${where}: unknown upstream source ${JSON.stringify(kind ?? "")} ` +
          `(module http.reverse_proxy.upstreams.<a|srv|multi>)`,
      );
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
 * The dynamic upstreams of a handler config, or null when it has none.
 *
 * @example
 * ```ts
 * import { provisionDynamicUpstreams } from "./mod.ts";
 * // in a handler's create(): const dyn = provisionDynamicUpstreams(config.dynamic_upstreams, ctx, where);
 * ```
 */
export function provisionDynamicUpstreams(
  raw: unknown,
  ctx: ProvisionContext,
  where: string,
): DynamicUpstreams | null {
  if (raw === undefined || raw === null) return null;
  const source = makeSource(asObject(raw, where), where, ctx);
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
