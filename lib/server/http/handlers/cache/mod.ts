/**
 * `http.handlers.cache`: an RFC 9111 shared cache with the Caddyfile syntax of
 * caddyserver/cache-handler. The config is {@linkcode CacheConfig} (`config.ts`); the handler
 * is `handler.ts` (entries and freshness in `entry.ts`, keys in `key.ts`, storages in
 * `store.ts`, `disk_store.ts` and `stores.ts`, `Cache-Status` in `status.ts`); the `cache`
 * app holding the handlers' defaults is `app.ts`, the admin endpoints `admin.ts`; the
 * Gatehousefile syntax (`cache` directive and global option) is `caddyfile.ts` and the
 * JSON → Gatehousefile writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { decodeCache } from "./config.ts";
import { Cache } from "./handler.ts";

export type { CacheConfig } from "./config.ts";

/** Registry entry. */
export const cacheModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.cache",
  create: (config, ctx) => Cache.provision(decodeCache(config), ctx),
};
