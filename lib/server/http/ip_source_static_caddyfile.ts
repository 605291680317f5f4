/**
 * Gatehousefile syntax of the `static` trusted-proxy source:
 * `trusted_proxies static <ranges...>` (`private_ranges` expands to the private networks).
 *
 * @module
 */
import type { Dispenser } from "../caddyfile/dispenser.ts";
import type { SyntaxSet } from "../caddyfile/registry.ts";
import type { StaticIPSourceConfig } from "./ip_source_static.ts";

const PRIVATE_RANGES = [
  "192.168.0.0/16",
  "172.16.0.0/12",
  "10.0.0.0/8",
  "127.0.0.1/8",
  "fd00::/8",
  "::1",
];

/** `static <ranges...>`. */
export function staticIPSource(d: Dispenser): StaticIPSourceConfig {
  if (!d.next()) return {};
  const ranges: string[] = [];
  while (d.nextArg()) {
    if (d.val() === "private_ranges") ranges.push(...PRIVATE_RANGES);
    else ranges.push(d.val());
  }
  return ranges.length > 0 ? { ranges } : {};
}

/** The Gatehousefile syntax of the trusted-proxy sources. */
export const syntax: SyntaxSet = { modules: { "http.ip_sources.static": staticIPSource } };
