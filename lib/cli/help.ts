/**
 * `gatehouse help [<command>]`, generated from the command declarations.
 *
 * @module
 */
import type { Command, CommandGroup } from "./command.ts";
import { commandFlags, ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";

/**
 * Renders one command's help text from its declaration, with the list of its `subcommands`
 * (the commands named `<name> <word>`, see `subcommandsOf` in the registry) when it has any.
 */
export function renderHelp(command: Command, subcommands: readonly Command[] = []): string {
  const lines = [`Usage:\n  gatehouse ${command.name} ${command.usage}`.trimEnd(), ""];
  lines.push(command.long ?? command.short, "");
  if (subcommands.length) {
    const words = subcommands.map((c) => c.name.slice(command.name.length + 1));
    const width = Math.max(...words.map((w) => w.length)) + 2;
    lines.push("Subcommands:");
    subcommands.forEach((c, i) => lines.push(`  ${words[i].padEnd(width)} ${c.short}`));
    lines.push("");
  }
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
  if (subcommands.length) {
    lines.push(
      "",
      `Use "gatehouse help ${command.name} <subcommand>" for more about a subcommand.`,
    );
  }
  return lines.join("\n");
}

/**
 * The command of a group that has no command of its own (`storage`): with no argument it
 * prints the group's help with its subcommands (exit 0), as `--help` and `help <group>` do;
 * any other word is an unknown subcommand (exit 1).
 */
export function groupCommand(
  name: string,
  subcommands: readonly Command[],
  declared?: CommandGroup,
): Command {
  const words = subcommands.map((c) => c.name.slice(name.length + 1));
  const group: Command = {
    name,
    usage: "<subcommand> [<args...>]",
    short: declared?.short ?? `Subcommands: ${words.join(", ")}`,
    long: declared?.long,
    flags: [],
    run({ args }) {
      if (args.length > 0) {
        throw new UsageError(
          `${name}: unknown subcommand "${args[0]}" (one of: ${words.join(", ")}); ` +
            `run "gatehouse help ${name}"`,
        );
      }
      console.log(renderHelp(group, subcommands));
      return Promise.resolve(ExitCode.Success);
    },
  };
  return group;
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
    const { findCommand, subcommandsOf } = await import("./registry.ts");
    const command = findCommand(args.join(" "));
    if (!command) {
      console.error(`unknown command "${args.join(" ")}"`);
      return ExitCode.Failure;
    }
    console.log(renderHelp(command, subcommandsOf(command.name)));
    return ExitCode.Success;
  },
};
