/**
 * Parses `argv` against the declared commands and runs one.
 *
 * @module
 */
import { parseArgs } from "node:util";
import type { Command, Flags } from "./command.ts";
import { ExitCode } from "./command.ts";
import { commands, findCommand } from "./registry.ts";
import { printUsage } from "./help.ts";

import { UsageError } from "./usage_error.ts";

export { UsageError };

/** Parses flags of one command; unknown flags are a UsageError. */
export function parseFlags(command: Command, argv: string[]): { flags: Flags; args: string[] } {
  const options: Record<
    string,
    { type: "string" | "boolean"; short?: string; multiple?: boolean }
  > = {};
  for (const f of command.flags) {
    options[f.name] = { type: f.type };
    if (f.short) options[f.name].short = f.short;
    if (f.multiple) options[f.name].multiple = true;
  }
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options,
      allowPositionals: true,
      strict: true,
    });
    const flags: Flags = {};
    for (const f of command.flags) {
      const v = (values as Record<string, unknown>)[f.name];
      flags[f.name] = (v ?? f.default) as Flags[string];
    }
    return { flags, args: positionals };
  } catch (e) {
    throw new UsageError(`${command.name}: ${(e as Error).message}`);
  }
}

/**
 * Runs the command line and resolves to the exit code.
 *
 * @example
 * ```ts
 * import { main } from "./main.ts";
 * Deno.exit(await main(["version"]));
 * ```
 */
export async function main(argv: string[]): Promise<number> {
  if (argv.length === 0) {
    await printUsage();
    return ExitCode.Success;
  }
  // Two-word commands (`storage export`, `file-server export-template`) win over one-word ones.
  let command = argv.length > 1 ? findCommand(`${argv[0]} ${argv[1]}`) : undefined;
  let rest = argv.slice(2);
  if (!command) {
    command = findCommand(argv[0]);
    rest = argv.slice(1);
  }
  if (!command) {
    console.error(`gatehouse: unknown command "${argv[0]}"; run "gatehouse help"`);
    return ExitCode.Failure;
  }
  try {
    const { flags, args } = parseFlags(command, rest);
    return await command.run({ flags, args });
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(e.message);
      return ExitCode.Failure;
    }
    console.error(`gatehouse ${command.name}: ${(e as Error)?.message ?? e}`);
    return ExitCode.Failure;
  }
}

export { commands };
