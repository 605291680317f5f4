/**
 * `gatehouse build-info`.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { VERSION } from "./version.ts";
import denoJson from "../../deno.json" with { type: "json" };

/** `build-info`. */
export const buildInfoCommand: Command = {
  name: "build-info",
  usage: "",
  short: "Prints build information",
  long: "Prints the main module, the runtime versions and the package dependencies.",
  flags: [],
  run() {
    const lines = [
      `path\t${Deno.mainModule}`,
      `mod\t${denoJson.name}\tv${VERSION}`,
      `runtime\tdeno\t${Deno.version.deno}`,
      `runtime\tv8\t${Deno.version.v8}`,
      `runtime\ttypescript\t${Deno.version.typescript}`,
      ...Object.entries(denoJson.imports as Record<string, string>)
        .filter(([k]) => !k.endsWith("/"))
        .map(([k, v]) => `dep\t${k}\t${v}`),
    ];
    console.log(lines.join("\n"));
    return Promise.resolve(ExitCode.Success);
  },
};
