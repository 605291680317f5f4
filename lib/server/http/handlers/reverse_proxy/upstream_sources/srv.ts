/**
 * `http.reverse_proxy.upstreams.srv`: upstreams from the SRV records of
 * `_<service>._<proto>.<name>` (or of `name` alone when service and proto are empty;
 * placeholders allowed), in the order of their priority and weight, looked up again after
 * `refresh` (default 1m). When a lookup fails, `grace_period` keeps serving the last answer
 * that long before asking again. A retry after a failed attempt looks the name up afresh.
 * Targets are dialed by name (the trailing dot removed). `dial_network` may only be `tcp`.
 *
 * @module
 */
import { durationMs } from "../../../../config/duration.ts";
import { compileTemplate } from "../../../replacer.ts";
import type { RequestContext } from "../../../context.ts";
import type { Logger } from "../../../../module/instance.ts";
import type { SRVSourceConfig } from "./config.ts";
import { lookup, lookupOptions as lookupOptionsOf } from "./resolver.ts";
import { AnswerCache, joinHostPort, type UpstreamSource } from "./source.ts";

/** SRV records in RFC 2782 order: by priority, then weighted random within a priority. */
export function orderSrv(records: Deno.SrvRecord[]): Deno.SrvRecord[] {
  const byPriority = new Map<number, Deno.SrvRecord[]>();
  for (const r of records) {
    const list = byPriority.get(r.priority) ?? [];
    list.push(r);
    byPriority.set(r.priority, list);
  }
  const out: Deno.SrvRecord[] = [];
  for (const p of [...byPriority.keys()].sort((a, b) => a - b)) {
    const list = [...byPriority.get(p)!];
    while (list.length) {
      const total = list.reduce((s, r) => s + r.weight, 0);
      let pick = 0;
      if (total > 0) {
        let n = Math.random() * total;
        pick = list.findIndex((r) => (n -= r.weight) < 0);
        if (pick < 0) pick = list.length - 1;
      }
      out.push(list.splice(pick, 1)[0]);
    }
  }
  return out;
}

/** Provisions a decoded `srv` source. */
export function srvSource(config: SRVSourceConfig, log: Logger): UpstreamSource {
  const service = compileTemplate(config.service ?? "");
  const proto = compileTemplate(config.proto ?? "");
  const plain = !config.service && !config.proto;
  const name = compileTemplate(config.name ?? "");
  const refresh = (config.refresh === undefined ? 0 : durationMs(config.refresh)) || 60_000;
  const grace = config.grace_period === undefined ? 0 : durationMs(config.grace_period);
  const lookupOptions = lookupOptionsOf(config);
  const cache = new AnswerCache(refresh);
  const pending = new Map<string, Promise<string[]>>();
  const addr = (c: RequestContext) => {
    const n = name.render(c);
    return plain ? n : `_${service.render(c)}._${proto.render(c)}.${n}`;
  };
  return {
    resetCache(c) {
      cache.delete(addr(c));
    },
    async dials(c) {
      const key = addr(c);
      const hit = cache.fresh(key);
      if (hit) return hit.dials;
      let running = pending.get(key);
      if (!running) {
        running = (async () => {
          log.debug("refreshing SRV upstreams", { name: key });
          let records: Deno.SrvRecord[];
          try {
            records = await lookup(key, "SRV", lookupOptions);
          } catch (e) {
            const last = cache.any(key);
            if (grace > 0 && last) {
              log.error("SRV lookup failed; using previously cached", {
                error: (e as Error).message,
              });
              cache.set(key, { dials: last.dials, freshness: Date.now() + grace - refresh });
              return last.dials;
            }
            throw e;
          }
          const dials = orderSrv(records).map((r) => {
            log.debug("discovered SRV record", {
              target: r.target,
              port: r.port,
              priority: r.priority,
              weight: r.weight,
            });
            return joinHostPort(r.target.replace(/\.$/, ""), r.port);
          });
          cache.set(key, { dials, freshness: Date.now() });
          return dials;
        })().finally(() => pending.delete(key));
        pending.set(key, running);
      }
      return await running;
    },
  };
}
