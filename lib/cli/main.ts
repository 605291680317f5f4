/**
 * Parses `argv` against the declared commands and runs one.
 *
 * @module
 */
import type { Command, Flags, FlagSpec } from "./command.ts";
import { commandFlags, ExitCode, HELP_FLAG } from "./command.ts";

import { UsageError } from "./usage_error.ts";
import { ignoreInspectorSignal } from "../inspector_signal.ts";
import type { MainOptions } from "./plugins.ts";

export { UsageError };
export type { MainOptions };

/**
 * Commands that work without the program's plugin packages: managing the installation (so a
 * plugin that stopped loading can be removed or upgraded) and help. For them a plugin that
 * fails to load is a warning; for every other command it is an error (exit 1).
 */
const PLUGINS_OPTIONAL = new Set([
  "add-package",
  "build-info",
  "completion",
  "help",
  "install",
  "manpage",
  "remove-package",
  "upgrade",
  "version",
]);

/**
 * Finds a command. `run`, the long-lived server process, loads only its own modules: the
 * registry imports every command, the database client among them (~8 MiB resident).
 */
async function findCommand(name: string): Promise<Command | undefined> {
  if (name === "run") return (await import("./run.ts")).runCommand;
  return (await import("./registry.ts")).findCommand(name);
}

/**
 * Parses flags of one command; unknown flags are a UsageError.
 *
 * The grammar is that of `node:util` `parseArgs` in strict mode, written here so that the
 * long-lived `run` process does not load Node compatibility (about 3 MiB resident):
 * `--name value`, `--name=value`, `-n value`, `-nvalue`, boolean groups such as `-vq`, and `--`
 * ending the flags. A lone `-` is an argument. Every command also takes `-h`/`--help` (see
 * {@linkcode commandFlags}), reported as `help: true`.
 */
export function parseFlags(
  command: Command,
  argv: string[],
): { flags: Flags; args: string[]; help: boolean } {
  const all = commandFlags(command);
  const byLong = new Map(all.map((f) => [f.name, f]));
  const byShort = new Map(all.filter((f) => f.short).map((f) => [f.short!, f]));
  const values: Record<string, string | boolean | string[]> = {};
  const args: string[] = [];
  const fail = (msg: string): never => {
    throw new UsageError(`${command.name}: ${msg}`);
  };
  const set = (f: FlagSpec, v: string | boolean) => {
    if (f.multiple) ((values[f.name] ??= []) as (string | boolean)[]).push(v);
    else values[f.name] = v;
  };
  const takeValue = (f: FlagSpec, shown: string, i: number): string => {
    if (i + 1 >= argv.length) fail(`Option '${shown} <value>' argument missing`);
    const next = argv[i + 1];
    if (next.startsWith("-") && next !== "-") {
      fail(
        `Option '${shown}' argument is ambiguous.\nDid you forget to specify the option argument ` +
          `for '${shown}'?\nTo specify an option argument starting with a dash use ` +
          `'${shown.startsWith("--") ? `${shown}=-XYZ` : `--${f.name}=-XYZ' or '${shown}-XYZ`}'.`,
      );
    }
    return next;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const f = byLong.get(name);
      if (!f) {
        fail(`Unknown option '--${name}'`);
        continue;
      }
      if (f.type === "boolean") {
        if (eq >= 0) fail(`Option '--${name}' does not take an argument`);
        set(f, true);
      } else if (eq >= 0) set(f, a.slice(eq + 1));
      else set(f, takeValue(f, `--${name}`, i++));
      continue;
    }
    if (a.startsWith("-") && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const f = byShort.get(a[j]);
        if (!f) {
          fail(`Unknown option '-${a[j]}'`);
          break;
        }
        if (f.type === "boolean") {
          set(f, true);
          continue;
        }
        if (j + 1 < a.length) set(f, a.slice(j + 1));
        else set(f, takeValue(f, `-${a[j]}`, i++));
        break;
      }
      continue;
    }
    args.push(a);
  }
  const flags: Flags = {};
  for (const f of command.flags) {
    flags[f.name] = (values[f.name] ?? f.default) as Flags[string];
  }
  const help = all.includes(HELP_FLAG) && values.help === true;
  return { flags, args, help };
}

/**
 * Runs the command line and resolves to the exit code. `options` come from an installed
 * gatehouse's entry (its installation and plugin packages) or a program's own entry (plugin
 * packages it chose): the plugins are loaded into the module registry before the command runs.
 *
 * @example
 * ```ts
 * import { main } from "./main.ts";
 * Deno.exit(await main(["version"]));
 * ```
 */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  // before anything else: SIGUSR1 must never open Deno's inspector, in a server process or in
  // a command waiting for one (`start`)
  ignoreInspectorSignal();
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
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
  if (options.installation || options.plugins?.length) {
    try {
      await (await import("./plugins.ts")).prepareProgram(options);
    } catch (e) {
      const message = (e as Error)?.message ?? String(e);
      if ((e as Error)?.name !== "PluginError" || !PLUGINS_OPTIONAL.has(command.name)) {
        console.error(`gatehouse ${command.name}: ${message}`);
        return ExitCode.Failure;
      }
      console.error(`gatehouse ${command.name}: warning: ${message}`);
    }
  }
  try {
    const { flags, args, help } = parseFlags(command, rest);
    if (help) {
      const { subcommandsOf } = await import("./registry.ts");
      console.log((await import("./help.ts")).renderHelp(command, subcommandsOf(command.name)));
      return ExitCode.Success;
    }
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
