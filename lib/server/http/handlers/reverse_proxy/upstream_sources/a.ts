/**
 * `http.reverse_proxy.upstreams.a`: upstreams from the A/AAAA records of `name` (placeholders
 * allowed), each dialed on `port` (default 80), looked up again after `refresh` (default 1m).
 * `versions` chooses IPv4 and/or IPv6 (both by default). `resolver`, `dial_timeout` and
 * `dial_fallback_delay` as in resolver.ts.
 *
 * @module
 */
import { durationMs } from "../../../../config/duration.ts";
import { compileTemplate } from "../../../replacer.ts";
import type { Logger } from "../../../../module/instance.ts";
import type { ASourceConfig } from "./config.ts";
import { lookupIP, lookupOptions as lookupOptionsOf } from "./resolver.ts";
import { AnswerCache, joinHostPort, type UpstreamSource } from "./source.ts";

/** Provisions a decoded `a` source. */
export function aSource(config: ASourceConfig, log: Logger): UpstreamSource {
  const name = compileTemplate(config.name ?? "");
  const port = compileTemplate(config.port || "80");
  const refresh = (config.refresh === undefined ? 0 : durationMs(config.refresh)) || 60_000;
  const lookupOptions = lookupOptionsOf(config);
  let v4 = true;
  let v6 = true;
  const versions = config.versions;
  if (versions) {
    const a = versions.ipv4;
    const b = versions.ipv6;
    if (a !== undefined || b !== undefined) {
      v4 = a === true;
      v6 = b === true;
      if (!v4 && !v6) v4 = v6 = true;
    }
  }
  const version = v4 && v6 ? "ip" : v4 ? "ip4" : "ip6";
  const cache = new AnswerCache(refresh);
  const pending = new Map<string, Promise<string[]>>();
  return {
    async dials(c) {
      const n = name.render(c);
      const p = port.render(c);
      const key = `${joinHostPort(n, p)}${version}`;
      const hit = cache.fresh(key);
      if (hit) return hit.dials;
      // one lookup at a time per name; requests meanwhile wait for it
      let running = pending.get(key);
      if (!running) {
        running = (async () => {
          log.debug("refreshing A upstreams", { version, name: n, port: p });
          const ips = await lookupIP(n, { v4, v6 }, lookupOptions);
          const dials = ips.map((ip) => joinHostPort(ip, p));
          for (const ip of ips) log.debug("discovered A record", { ip });
          cache.set(key, { dials, freshness: Date.now() });
          return dials;
        })().finally(() => pending.delete(key));
        pending.set(key, running);
      }
      return await running;
    },
  };
}
