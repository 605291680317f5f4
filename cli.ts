/**
 * The `gatehouse` command line: `deno run -A cli.ts <command> [<args...>]`.
 *
 * @example
 * ```sh
 * deno run -A cli.ts help
 * ```
 *
 * @module
 */
import { main } from "./lib/cli/main.ts";

export { main };
export type { MainOptions, PluginSource } from "./lib/cli/plugins.ts";

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
