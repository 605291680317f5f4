/**
 * `http.ip_sources.static`: a fixed list of trusted proxy ranges (`ranges`, CIDR or single
 * addresses; `private_ranges` expands to the private networks).
 *
 * @module
 */
import type { ModuleDefinition } from "../module/mod.ts";
import { checkFields, optStrings } from "./config.ts";
import { parseRanges } from "../net/ip.ts";
import type { IPRangeSource } from "./server.ts";

/** Registry entry. */
export const staticIPSourceModule: ModuleDefinition<IPRangeSource> = {
  id: "http.ip_sources.static",
  create(config) {
    checkFields(config, ["source", "ranges"], "http.ip_sources.static");
    const ranges = parseRanges(optStrings(config, "ranges", "http.ip_sources.static") ?? []);
    return { ranges: () => ranges };
  },
};
