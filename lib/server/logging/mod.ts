/**
 * Registers the logging modules: the encoders (`caddy.logging.encoders.*`: json and console,
 * and, loaded when a config first names one, the wrapping encoders and the field filters) and
 * the writers (`caddy.logging.writers.*`: stdout, stderr, discard, net, file).
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
import { getModule, lazyModule, type ModuleDefinition, registerModule } from "../module/mod.ts";
import { consoleEncoderModule, jsonEncoderModule } from "./encoders.ts";
import { netWriterModule, streamWriterModules } from "./writers.ts";
import { fileWriterModule } from "./file_writer.ts";

const wrapping = () => import("./wrapping_encoders.ts");
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

const loggingModules: ModuleDefinition[] = [
  jsonEncoderModule,
  consoleEncoderModule,
  lazyModule("caddy.logging.encoders.filter", async () => (await wrapping()).filterEncoderModule),
  lazyModule("caddy.logging.encoders.append", async () => (await wrapping()).appendEncoderModule),
  lazyModule(
    "caddy.logging.encoders.journald",
    async () => (await wrapping()).journaldEncoderModule,
  ),
  ...FILTERS.map((name) =>
    lazyModule(
      `caddy.logging.encoders.filter.${name}`,
      async () =>
        (await import("./filters.ts")).FILTER_MODULES[name] as unknown as ModuleDefinition,
    )
  ),
  ...streamWriterModules,
  netWriterModule,
  fileWriterModule,
] as ModuleDefinition[];

for (const m of loggingModules) {
  if (!getModule(m.id)) registerModule(m);
}
