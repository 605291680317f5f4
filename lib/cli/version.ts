/**
 * `gatehouse version`.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import denoJson from "../../deno.json" with { type: "json" };

/** The package version, from deno.json. */
export const VERSION: string = denoJson.version;

/** `version`: prints the version and exits. */
export const versionCommand: Command = {
  name: "version",
  usage: "",
  short: "Prints the version",
  flags: [],
  run() {
    console.log(`gatehouse v${VERSION}`);
    return Promise.resolve(ExitCode.Success);
  },
};
