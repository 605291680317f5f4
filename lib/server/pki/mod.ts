/**
 * The table of the `pki` app's modules, registered on import: the app and its admin endpoints
 * (`admin.api.pki`). The CA code and `@peculiar/x509` load when a config first uses them.
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
import { type ModuleDefinition, type ModuleEntry, registerTable } from "../module/mod.ts";

/** Every module of the `pki` app. */
export const PKI_MODULES: readonly ModuleEntry[] = [
  {
    id: "pki",
    load: async () => (await import("./app.ts")).pkiAppModule as unknown as ModuleDefinition,
  },
  { id: "admin.api.pki", load: async () => (await import("./admin.ts")).pkiAdminModule },
];

registerTable(PKI_MODULES);
