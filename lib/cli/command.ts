/**
 * The command line is data: each command is declared once (name, flags, help, run) in its own
 * file under `lib/cli/`, added to `registry.ts`, and help, completion scripts and man pages are
 * generated from these declarations.
 *
 * @module
 */

/** One flag of a command. */
export interface FlagSpec {
  /** Long name without dashes, e.g. `config`. */
  name: string;
  /** One-letter form without the dash, e.g. `c`. */
  short?: string;
  /** `string` takes a value; `boolean` does not. */
  type: "string" | "boolean";
  /** Repeatable flags collect every value into an array. */
  multiple?: boolean;
  /** Placeholder shown in help, e.g. `<path>`. */
  value?: string;
  /** One line of help. */
  help: string;
  /** Default value shown in help and used when the flag is absent. */
  default?: string | boolean;
}

/** `-h/--help`, which every command takes: it prints the command's help and exits 0. */
export const HELP_FLAG: FlagSpec = {
  name: "help",
  short: "h",
  type: "boolean",
  help: "Show this help",
};

/**
 * A command's declared flags plus `-h/--help` (unless the command declares flags of those
 * names): what the parser accepts and what help, completion and man pages list.
 *
 * @example
 * ```ts
 * import { commandFlags } from "./command.ts";
 * commandFlags({ name: "x", usage: "", short: "", flags: [], run: () => Promise.resolve(0) })
 *   .map((f) => f.name); // ["help"]
 * ```
 */
export function commandFlags(command: Command): FlagSpec[] {
  const taken = command.flags.some((f) => f.name === "help" || f.short === "h");
  return taken ? command.flags : [...command.flags, HELP_FLAG];
}

/** Parsed flags: strings, booleans, or arrays for repeatable flags. */
export type Flags = Record<string, string | boolean | string[] | undefined>;

/**
 * The value a flag's declaration gives it after parsing: `boolean` flags are true or absent,
 * repeatable ones collect an array, a string flag with a default always has a value.
 */
export type FlagValue<F extends FlagSpec> = F extends { type: "boolean" } ? boolean | undefined
  : F extends { multiple: true } ? string[] | undefined
  : F extends { default: string } ? string
  : string | undefined;

/** The parsed flags of a list of flag declarations, by long name, typed from each one. */
export type FlagsOf<Fs extends readonly FlagSpec[]> = {
  [F in Fs[number] as F["name"]]: FlagValue<F>;
};

/** A command whose run function sees its flags typed from their declarations. */
export interface TypedCommand<Fs extends readonly FlagSpec[]>
  extends Omit<Command, "flags" | "run"> {
  /** Declared flags (write them in place, or spread shared ones declared `as const`). */
  flags: Fs;
  /** Runs the command with its flags typed from `flags`. */
  run(input: { flags: FlagsOf<Fs>; args: string[] }): Promise<number>;
}

/**
 * Declares a command whose `run` sees `flags.<name>` typed from the flag declarations (a
 * string, a boolean, or an array for repeatable flags), so that no flag is cast.
 *
 * @example
 * ```ts
 * import { defineCommand } from "./command.ts";
 * const hello = defineCommand({
 *   name: "hello",
 *   usage: "[--name <who>]",
 *   short: "Says hello",
 *   flags: [{ name: "name", type: "string", help: "Who", default: "world" }],
 *   run({ flags }) {
 *     console.log(`hello ${flags.name.toUpperCase()}`); // flags.name: string
 *     return Promise.resolve(0);
 *   },
 * });
 * hello.name; // "hello"
 * ```
 */
export function defineCommand<const Fs extends readonly FlagSpec[]>(
  command: TypedCommand<Fs>,
): Command {
  return command as unknown as Command;
}

/** What a command's run function receives. */
export interface CommandInput {
  /** Parsed flags by long name. */
  flags: Flags;
  /** Positional arguments after the command (and subcommand) name. */
  args: string[];
}

/** A command of `gatehouse`. `run` returns the process exit code. */
export interface Command {
  /** Name as typed, e.g. `run`; subcommands are written `storage export`. */
  name: string;
  /** Synopsis after the name, e.g. `[-c <path>] [-a <name>]`. */
  usage: string;
  /** One line for the command list. */
  short: string;
  /** Longer help text (paragraphs). */
  long?: string;
  /** Declared flags. */
  flags: FlagSpec[];
  /** Runs the command and resolves to the exit code. */
  run(input: CommandInput): Promise<number>;
}

/**
 * The first word that subcommands share (`storage` of `storage export`, `storage import`): a
 * group answers with the list of its subcommands (`gatehouse storage`, `gatehouse storage
 * --help`, `gatehouse help storage`). Declared only for its help text; the subcommands come
 * from the commands' names.
 */
export interface CommandGroup {
  /** The shared first word, e.g. `storage`. */
  name: string;
  /** One line for help. */
  short: string;
  /** Longer help text (paragraphs). */
  long?: string;
}

/** Exit codes of the spec. */
export const ExitCode = {
  /** Normal exit. */
  Success: 0,
  /** Startup failure; do not restart automatically. */
  Failure: 1,
  /** Forced exit without cleaning up resources. */
  Forced: 2,
  /** Failure during cleanup on exit. */
  CleanupFailed: 3,
} as const;
