/**
 * `http.ip_sources.static`: a fixed list of trusted proxy ranges (`ranges`, CIDR or single
 * addresses; `private_ranges` expands to the private networks).
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import { Decoder, type Raw } from "../config/decode.ts";
import type { IPRange } from "../net/ip.ts";
import type { IPRangeSource } from "./server.ts";

/** `http.ip_sources.static` (Caddy's `StaticIPRange`, `modules/caddyhttp/ip_range.go`). */
export type StaticIPSourceConfig = {
  /** The module name (the `trusted_proxies` object names its source). */
  source?: "static";
  /** IP ranges (`10.0.0.0/8`) or addresses; `private_ranges` stands for the private networks. */
  ranges?: string[];
};

/** The fields of {@linkcode StaticIPSourceConfig}. */
export const STATIC_IP_SOURCE_FIELDS: readonly (keyof StaticIPSourceConfig)[] = [
  "source",
  "ranges",
];

/**
 * Decodes a `static` source into its parsed ranges (a range that does not parse is refused).
 *
 * @example
 * ```ts
 * import { decodeStaticIPSource } from "./ip_source_static.ts";
 * decodeStaticIPSource({ ranges: ["10.0.0.0/8"] }).length; // 1
 * ```
 */
export function decodeStaticIPSource(raw: Raw): IPRange[] {
  const d = new Decoder(raw, "http.ip_sources.static").fields(STATIC_IP_SOURCE_FIELDS);
  return d.ipRanges("ranges") ?? [];
}

/** Registry entry. */
export const staticIPSourceModule: ModuleDefinition<IPRangeSource> = {
  id: "http.ip_sources.static",
  create(config) {
    const ranges = decodeStaticIPSource(config);
    return { ranges: () => ranges };
  },
};
