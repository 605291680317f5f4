/**
 * Registers the `pki` app and its admin endpoints (`admin.api.pki`). The CA code and
 * `@peculiar/x509` load when a config first uses them.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("pki"); // defined
 * ```
 *
 * @module
 */
import { getModule, type ModuleDefinition, registerModule } from "../module/mod.ts";

function lazy(id: string, load: () => Promise<ModuleDefinition>): ModuleDefinition {
  let loading: Promise<ModuleDefinition> | undefined;
  return {
    id,
    async create(config, ctx) {
      return await (await (loading ??= load())).create(config, ctx);
    },
  };
}

const modules: ModuleDefinition[] = [
  lazy("pki", async () => (await import("./app.ts")).pkiAppModule as unknown as ModuleDefinition),
  lazy("admin.api.pki", async () => (await import("./admin.ts")).pkiAdminModule),
];

for (const m of modules) if (!getModule(m.id)) registerModule(m);
