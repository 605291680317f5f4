/**
 * Registers every module of the `http` app (the app, matchers, handlers, ip sources) with the
 * module registry. Importing this file is enough to make `apps.http` configs work.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("http.handlers.static_response"); // defined
 * ```
 *
 * @module
 */
import { getModule, type ModuleDefinition, registerModule, registerTable } from "../module/mod.ts";
import { httpAppModule } from "./app.ts";
import { HANDLERS } from "./handlers/mod.ts";
import { MATCHERS } from "./matchers/mod.ts";
import { IP_SOURCES } from "./ip_sources.ts";

if (!getModule(httpAppModule.id)) registerModule(httpAppModule as unknown as ModuleDefinition);
registerTable(MATCHERS);
registerTable(HANDLERS);
registerTable(IP_SOURCES);
registerTable([
  {
    id: "cache",
    load: async () => (await import("./handlers/cache/app.ts")).cacheAppModule,
  },
  {
    id: "admin.api.cache",
    load: async () => (await import("./handlers/cache/admin.ts")).cacheAdminModule,
  },
  {
    id: "admin.api.reverse_proxy",
    load: async () => (await import("./handlers/reverse_proxy/admin.ts")).reverseProxyAdminModule,
  },
]);
