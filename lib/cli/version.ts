/**
 * `gatehouse version`.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { VERSION } from "../version.ts";

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
