/**
 * `http.reverse_proxy.upstreams.multi`: the upstreams of every source in `sources`, in order.
 * A source that fails or finds nothing is logged and skipped; the others still count.
 *
 * @module
 */
import type { Logger } from "../../../../module/instance.ts";
import type { MultiSourceConfig, UpstreamSourceConfig } from "./config.ts";
import type { UpstreamSource } from "./source.ts";

/** Provisions a decoded `multi` source; `make` provisions each inner source. */
export function multiSource(
  c: MultiSourceConfig,
  log: Logger,
  make: (c: UpstreamSourceConfig) => UpstreamSource,
): UpstreamSource {
  const sources = (c.sources ?? []).map(make);
  return {
    resetCache(c) {
      for (const s of sources) s.resetCache?.(c);
    },
    async dials(c) {
      const out: string[] = [];
      for (let i = 0; i < sources.length; i++) {
        try {
          const found = await sources[i].dials(c);
          if (found.length === 0) {
            log.warn("upstream source returned 0 upstreams", { source_idx: i });
          }
          out.push(...found);
        } catch (e) {
          log.error("upstream source returned error", {
            source_idx: i,
            error: (e as Error)?.message ?? String(e),
          });
        }
      }
      return out;
    },
  };
}
