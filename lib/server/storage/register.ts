/**
 * Registers the storage modules: `caddy.storage.file_system` (the default) and
 * `caddy.storage.libsql`, whose code (and `@libsql/client`) loads only when a config uses it.
 *
 * @example
 * ```ts
 * import "./register.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("caddy.storage.libsql"); // defined
 * ```
 *
 * @module
 */
import { getModule, type ModuleDefinition, registerModule } from "../module/mod.ts";
import { fileSystemStorageModule } from "./file_system.ts";

const libsqlLazy: ModuleDefinition = {
  id: "caddy.storage.libsql",
  async create(config, ctx) {
    const { libsqlStorageModule } = await import("./libsql.ts");
    return await libsqlStorageModule.create(config, ctx);
  },
};

for (const def of [fileSystemStorageModule as unknown as ModuleDefinition, libsqlLazy]) {
  if (!getModule(def.id)) registerModule(def);
}
