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
import { checkFields, optDuration, optString, type Raw } from "../../../config.ts";
import { ConfigError } from "../../../../config/error.ts";
import { compileTemplate } from "../../../replacer.ts";
import type { RequestContext } from "../../../context.ts";
import type { Logger } from "../../../../module/instance.ts";
import { lookup, parseLookupOptions } from "./resolver.ts";
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

/** Decodes and provisions an `srv` source. */
export function srvSource(raw: Raw, where: string, log: Logger): UpstreamSource {
  checkFields(raw, [
    "source",
    "service",
    "proto",
    "name",
    "refresh",
    "grace_period",
    "resolver",
    "dial_timeout",
    "dial_fallback_delay",
    "dial_network",
  ], where);
  const service = compileTemplate(optString(raw, "service", where) ?? "");
  const proto = compileTemplate(optString(raw, "proto", where) ?? "");
  const plain = !optString(raw, "service", where) && !optString(raw, "proto", where);
  const nameRaw = optString(raw, "name", where) ?? "";
  if (!nameRaw) throw new ConfigError("invalid_config", `${where}: "name" is required`);
  const name = compileTemplate(nameRaw);
  const network = optString(raw, "dial_network", where) ?? "";
  if (network !== "" && network !== "tcp") {
    throw new ConfigError(
      "invalid_config",
      `${where}.dial_network: ${JSON.stringify(network)} is not supported (upstreams from SRV ` +
        `records are dialed over tcp)`,
    );
  }
  const refresh = optDuration(raw, "refresh", where) || 60_000;
  const grace = optDuration(raw, "grace_period", where) ?? 0;
  const lookupOptions = parseLookupOptions(raw, where);
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
