/**
 * Every command of `gatehouse`, in the order help lists them. A new command is one file under
 * `lib/cli/` plus one line here.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { helpCommand } from "./help.ts";
import { versionCommand } from "./version.ts";

/** All declared commands. */
export const commands: Command[] = [
  helpCommand,
  versionCommand,
];

/** Finds a command by name (`storage export` style names included). */
export function findCommand(name: string): Command | undefined {
  return commands.find((c) => c.name === name);
}
