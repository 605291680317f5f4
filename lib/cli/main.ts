/**
 * Parses `argv` against the declared commands and runs one.
 *
 * @module
 */
import { parseArgs } from "node:util";
import type { Command, Flags } from "./command.ts";
import { ExitCode } from "./command.ts";

import { UsageError } from "./usage_error.ts";

export { UsageError };

/**
 * Finds a command. `run`, the long-lived server process, loads only its own modules: the
 * registry imports every command, the database client among them (~8 MiB resident).
 */
async function findCommand(name: string): Promise<Command | undefined> {
  if (name === "run") return (await import("./run.ts")).runCommand;
  return (await import("./registry.ts")).findCommand(name);
}

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
    await (await import("./help.ts")).printUsage();
    return ExitCode.Success;
  }
  // Two-word commands (`storage export`, `file-server export-template`) win over one-word ones.
  let command = argv.length > 1 && argv[0] !== "run"
    ? await findCommand(`${argv[0]} ${argv[1]}`)
    : undefined;
  let rest = argv.slice(2);
  if (!command) {
    command = await findCommand(argv[0]);
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
