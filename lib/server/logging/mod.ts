/**
 * The table of the logging modules, registered on import: the encoders
 * (`caddy.logging.encoders.*`: json and console, the wrapping encoders and the field filters)
 * and the writers (`caddy.logging.writers.*`: stdout, stderr, discard, net, file), each with
 * its Gatehousefile syntax where it has one. A module's code loads when a config first names
 * it.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("caddy.logging.writers.file"); // defined
 * ```
 *
 * @module
 */
import { type ModuleDefinition, registerTable } from "../module/mod.ts";
import type { SyntaxEntry } from "../caddyfile/registry.ts";

const wrapping = () => import("./wrapping_encoders.ts");
const writers = () => import("./writers.ts");
const syntax = async () => (await import("./caddyfile.ts")).syntax;
const wrappingSyntax = async () => (await import("./caddyfile_encoders.ts")).syntax;
const FILTERS = [
  "delete",
  "rename",
  "replace",
  "hash",
  "ip_mask",
  "query",
  "cookie",
  "set_cookie",
  "regexp",
  "multi_regexp",
];

/** Every logging module. */
export const LOGGING_MODULES: readonly SyntaxEntry[] = [
  {
    id: "caddy.logging.encoders.json",
    load: async () => (await import("./encoders.ts")).jsonEncoderModule as ModuleDefinition,
    syntax,
  },
  {
    id: "caddy.logging.encoders.console",
    load: async () => (await import("./encoders.ts")).consoleEncoderModule as ModuleDefinition,
    syntax,
  },
  {
    id: "caddy.logging.encoders.filter",
    load: async () => (await wrapping()).filterEncoderModule as ModuleDefinition,
    syntax: wrappingSyntax,
  },
  {
    id: "caddy.logging.encoders.append",
    load: async () => (await wrapping()).appendEncoderModule as ModuleDefinition,
    syntax: wrappingSyntax,
  },
  {
    id: "caddy.logging.encoders.journald",
    load: async () => (await wrapping()).journaldEncoderModule as ModuleDefinition,
    syntax: wrappingSyntax,
  },
  ...FILTERS.map((name) => ({
    id: `caddy.logging.encoders.filter.${name}`,
    load: async () =>
      (await import("./filters.ts")).FILTER_MODULES[name] as unknown as ModuleDefinition,
    syntax: wrappingSyntax,
  })),
  ...["stdout", "stderr", "discard"].map((name) => ({
    id: `caddy.logging.writers.${name}`,
    load: async () =>
      (await writers()).streamWriterModules.find((m) =>
        m.id === `caddy.logging.writers.${name}`
      ) as ModuleDefinition,
  })),
  {
    id: "caddy.logging.writers.net",
    load: async () => (await writers()).netWriterModule as ModuleDefinition,
    syntax,
  },
  {
    id: "caddy.logging.writers.file",
    load: async () => (await import("./file_writer.ts")).fileWriterModule as ModuleDefinition,
    syntax,
  },
];

registerTable(LOGGING_MODULES);
