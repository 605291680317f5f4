/**
 * The table of the storage modules, registered on import: `caddy.storage.file_system` (the
 * default) and `caddy.storage.libsql`, whose code (and `@libsql/client`) loads only when a
 * config uses it; each names its Gatehousefile syntax where it has one.
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
import { type ModuleDefinition, registerTable } from "../module/mod.ts";
import type { SyntaxEntry } from "../caddyfile/registry.ts";

/** Every storage module. */
export const STORAGE_MODULES: readonly SyntaxEntry[] = [
  {
    id: "caddy.storage.file_system",
    load: async () =>
      (await import("./file_system.ts")).fileSystemStorageModule as unknown as ModuleDefinition,
    syntax: async () => (await import("./caddyfile.ts")).syntax,
  },
  {
    id: "caddy.storage.libsql",
    load: async () =>
      (await import("./libsql.ts")).libsqlStorageModule as unknown as ModuleDefinition,
  },
];

registerTable(STORAGE_MODULES);
