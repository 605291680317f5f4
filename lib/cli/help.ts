/**
 * `gatehouse help [<command>]`, generated from the command declarations.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { commandFlags, ExitCode } from "./command.ts";

/** Renders one command's help text from its declaration. */
export function renderHelp(command: Command): string {
  const lines = [`Usage:\n  gatehouse ${command.name} ${command.usage}`.trimEnd(), ""];
  lines.push(command.long ?? command.short, "");
  const flags = commandFlags(command);
  if (flags.length) {
    lines.push("Flags:");
    for (const f of flags) {
      const names = (f.short ? `-${f.short}, ` : "    ") + `--${f.name}` +
        (f.type === "string" ? ` ${f.value ?? "<value>"}` : "");
      const def = f.default !== undefined && f.default !== false ? ` (default ${f.default})` : "";
      lines.push(`  ${names.padEnd(30)} ${f.help}${def}`);
    }
  }
  return lines.join("\n");
}

/** Prints the list of commands. */
export async function printUsage(): Promise<void> {
  const { commands } = await import("./registry.ts");
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  console.log(
    [
      "gatehouse: a web server with a JSON config tree and an admin API",
      "",
      "Usage:\n  gatehouse <command> [<args...>]",
      "",
      "Commands:",
      ...commands.map((c) => `  ${c.name.padEnd(width)} ${c.short}`),
      "",
      'Use "gatehouse help <command>" for more about a command.',
    ].join("\n"),
  );
}

/** `help [<command>]`. */
export const helpCommand: Command = {
  name: "help",
  usage: "[<command>]",
  short: "Shows help for gatehouse or one of its commands",
  flags: [],
  async run({ args }) {
    if (args.length === 0) {
      await printUsage();
      return ExitCode.Success;
    }
    const { findCommand } = await import("./registry.ts");
    const command = findCommand(args.join(" "));
    if (!command) {
      console.error(`unknown command "${args.join(" ")}"`);
      return ExitCode.Failure;
    }
    console.log(renderHelp(command));
    return ExitCode.Success;
  },
};
