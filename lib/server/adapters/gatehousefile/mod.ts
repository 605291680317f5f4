/**
 * The `gatehousefile` config adapter (also `caddyfile`): the Caddyfile syntax to native JSON.
 * `adaptGatehousefile` is the direct entry; `register.ts` puts it in the adapter registry,
 * loading this module on first use.
 *
 * @example
 * ```ts
 * import { adaptGatehousefile } from "./mod.ts";
 * const { result } = adaptGatehousefile(":8080 {\n\trespond hello\n}\n");
 * // result.apps.http.servers.srv0.listen: [":8080"]
 * ```
 *
 * @module
 */
import type { AdapterWarning, AdaptResult } from "../../adapter.ts";
import type { EnvLookup } from "../../caddyfile/lexer.ts";
import type { FileSource } from "../../caddyfile/files.ts";
import { firstUnformattedLine } from "../../caddyfile/formatter.ts";
import { parseGatehousefile } from "../../caddyfile/parser.ts";
import { setup } from "./setup.ts";
import "./table.ts";

export { GatehousefileError } from "../../caddyfile/dispenser.ts";

/** Options of {@linkcode adaptGatehousefile}. */
export interface AdaptOptions {
  /** Name of the file the text came from (errors and relative imports use it). */
  filename?: string;
  /** Environment for `{$VAR}` (default: the process environment). */
  env?: EnvLookup;
  /** File access for `import` (default: the local file system). */
  files?: FileSource;
}

/**
 * Adapts Gatehousefile text to a native JSON config. Throws an Error naming the file and
 * line on any problem; returns warnings (e.g. unformatted input) with the result.
 *
 * @example
 * ```ts
 * import { adaptGatehousefile } from "./mod.ts";
 * adaptGatehousefile("localhost\nrespond hi", { filename: "Gatehousefile" }).warnings.length; // 0
 * ```
 */
export function adaptGatehousefile(body: string, options: AdaptOptions = {}): AdaptResult {
  const filename = options.filename || "Gatehousefile";
  const warnings: AdapterWarning[] = [];
  const blocks = parseGatehousefile(filename, body, {
    env: options.env,
    files: options.files,
    warn: (w) => warnings.push(w),
  });
  const { config } = setup(blocks, warnings);
  const line = firstUnformattedLine(body);
  if (line !== undefined) {
    warnings.push({
      file: filename,
      line,
      message: "input is not formatted; run 'gatehouse fmt --overwrite' to fix inconsistencies",
    });
  }
  return { result: config, warnings };
}
