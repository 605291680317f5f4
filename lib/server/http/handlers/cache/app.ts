/**
 * The `cache` app (caddyserver/cache-handler's `SouinApp`): the settings every `cache`
 * handler of the config takes as defaults, from the `cache` global option. It runs nothing;
 * a config with a `cache` handler and no `apps.cache` gets an empty one.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { App } from "../../../module/instance.ts";
import { type CacheAppConfig, decodeCacheApp } from "./config.ts";

/** The provisioned `cache` app. */
export interface CacheApp extends App {
  /** The handlers' defaults. */
  readonly options: CacheAppConfig;
}

/** Registry entry of the `cache` app. */
export const cacheAppModule: ModuleDefinition<CacheApp> = {
  id: "cache",
  create: (config) => ({ options: decodeCacheApp(config), start() {}, stop() {} }),
};
