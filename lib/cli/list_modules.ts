/**
 * `gatehouse list-modules`.
 *
 * @module
 */
import "../server/standard.ts";
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { listModules } from "../server/module.ts";
import { VERSION } from "./version.ts";

/** `list-modules`. */
export const listModulesCommand: Command = {
  name: "list-modules",
  usage: "[--packages] [--versions] [--skip-standard]",
  short: "Lists the installed modules",
  long:
    "Lists the installed modules. Every module ships in the gatehouse package, so --skip-standard lists only modules a program registered itself (none from the command line).",
  flags: [
    { name: "packages", type: "boolean", help: "Print the package of each module" },
    { name: "versions", type: "boolean", help: "Print the version of each module" },
    { name: "skip-standard", short: "s", type: "boolean", help: "Skip the standard modules" },
  ],
  run({ flags }) {
    const ids = flags["skip-standard"] ? [] : listModules();
    for (const id of ids) {
      const parts = [id];
      if (flags.versions) parts.push(`v${VERSION}`);
      if (flags.packages) parts.push("jsr:@gatehouse/gatehouse");
      console.log(parts.join(" "));
    }
    console.log(`\n  Standard modules: ${listModules().length}`);
    return Promise.resolve(ExitCode.Success);
  },
};
