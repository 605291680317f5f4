/**
 * `gatehouse adapt --reverse`: native JSON (a file, stdin, or the live config of a running
 * server) → a formatted Gatehousefile on stdout; parts with no Gatehousefile form on stderr,
 * with exit code 1.
 *
 * @module
 */
import { ExitCode } from "./command.ts";
import { adminRequest } from "./admin_client.ts";
import { UsageError } from "./usage_error.ts";
import { jsonErrorMessage } from "../server/errors.ts";
import { gatehousefileFromJson } from "../server/adapters/gatehousefile/reverse/mod.ts";

/** The flags of `adapt` that `--reverse` reads. */
export interface ReverseFlags {
  /** The admin endpoint to read the live config from. */
  address?: string;
  /** A native JSON file (`-`: standard input). */
  config?: string;
  /** Only `gatehousefile` (the default) or `json`. */
  adapter?: string;
  /** `--reverse` given (`--address` alone is refused without it). */
  reverse?: boolean;
  /** `--validate` given (refused: it does not apply to `--reverse`). */
  validate?: boolean;
}

async function readJson(flags: ReverseFlags): Promise<unknown> {
  if (flags.address) {
    const res = await adminRequest(flags.address, "GET", "/config/");
    return await res.json();
  }
  const path = flags.config;
  if (!path) {
    throw new UsageError(
      "adapt --reverse reads native JSON: give --config <file.json> (- for stdin), or --address <interface> for the live config of a running server",
    );
  }
  if (flags.adapter && flags.adapter !== "gatehousefile" && flags.adapter !== "json") {
    throw new UsageError(`adapt --reverse reads native JSON only, not ${flags.adapter}`);
  }
  let text: string;
  try {
    text = path === "-"
      ? await new Response(Deno.stdin.readable).text()
      : await Deno.readTextFile(path);
  } catch (e) {
    throw new UsageError(`reading config file ${path}: ${(e as Error).message}`);
  }
  try {
    return text.trim() === "" ? null : JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${path}: decoding JSON config: ${jsonErrorMessage(e)}`);
  }
}

async function writeStdout(text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}

/** Runs `adapt --reverse`. */
export async function reverseCommandRun(flags: ReverseFlags): Promise<number> {
  if (!flags.reverse) throw new UsageError("adapt: --address is only used with --reverse");
  if (flags.validate) throw new UsageError("adapt: --validate does not apply to --reverse");
  const config = await readJson(flags);
  const r = await gatehousefileFromJson(config);
  await writeStdout(r.text);
  for (const w of r.warnings) {
    console.error(`gatehouse adapt: warning: ${w.path || "/"}: ${w.message}`);
  }
  for (const p of r.problems) console.error(`gatehouse adapt: ${p.path || "/"}: ${p.message}`);
  if (r.problems.length) {
    console.error(
      `gatehouse adapt: ${r.problems.length} part(s) of the JSON config have no Gatehousefile form; the text above leaves them out`,
    );
    return ExitCode.Failure;
  }
  return ExitCode.Success;
}
