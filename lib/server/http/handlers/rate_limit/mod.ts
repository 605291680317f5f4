/**
 * `http.handlers.rate_limit`: rate limits per zone and key with a sliding window, local or
 * shared by instances through storage, with the JSON and Caddyfile syntax of
 * github.com/mholt/caddy-ratelimit. The config is {@linkcode RateLimitConfig} (`config.ts`);
 * the handler is `handler.ts` (the window in `ring.ts`, the zones' state across reloads in
 * `zones.ts`, shared counts in `distributed.ts`); the Gatehousefile syntax is `caddyfile.ts`
 * and the JSON → Gatehousefile writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { decodeRateLimit } from "./config.ts";
import { RateLimit } from "./handler.ts";

export type { RateLimitConfig } from "./config.ts";

/** Registry entry. */
export const rateLimitModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.rate_limit",
  create: (config, ctx) => RateLimit.provision(decodeRateLimit(config), ctx),
};
