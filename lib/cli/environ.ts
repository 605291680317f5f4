/**
 * `gatehouse environ` and the `--envfile` / `--environ` flags.
 *
 * @module
 */
import type { Command, Flags } from "./command.ts";
import { ExitCode } from "./command.ts";
import { parseEnvFile } from "../server/envfile.ts";
import { UsageError } from "./usage_error.ts";

/** Loads env files into the environment; variables already set are kept. */
export async function applyEnvFiles(flag: Flags[string]): Promise<void> {
  const files = Array.isArray(flag) ? flag : typeof flag === "string" && flag ? [flag] : [];
  for (const file of files) {
    let vars: Record<string, string>;
    try {
      vars = parseEnvFile(await Deno.readTextFile(file));
    } catch (e) {
      throw new UsageError(`loading environment file ${file}: ${(e as Error).message}`);
    }
    for (const [k, v] of Object.entries(vars)) {
      if (Deno.env.get(k) === undefined) Deno.env.set(k, v);
    }
  }
}

/** Prints every environment variable as `KEY=value`, sorted. */
export function printEnviron(): void {
  const env = Deno.env.toObject();
  console.log(Object.keys(env).sort().map((k) => `${k}=${env[k]}`).join("\n"));
}

/** `environ`. */
export const environCommand: Command = {
  name: "environ",
  usage: "[--envfile <path>]",
  short: "Prints the environment",
  long: "Prints the environment variables the server sees, then exits.",
  flags: [
    {
      name: "envfile",
      type: "string",
      multiple: true,
      value: "<file>",
      help: "Load environment variables from a file first",
    },
  ],
  async run({ flags }) {
    await applyEnvFiles(flags.envfile);
    printEnviron();
    return ExitCode.Success;
  },
};
