/**
 * `gatehouse fmt`: formats a Gatehousefile (Caddy's layout rules) to stdout, in place with
 * `--overwrite`, or as a line diff with `--diff`; exits 1 when the input was not formatted.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { findDefaultConfig } from "./config_file.ts";
import { diffLines } from "./line_diff.ts";
import { UsageError } from "./usage_error.ts";
import { firstUnformattedLine, formatGatehousefile } from "../server/caddyfile/formatter.ts";

async function readInput(path: string): Promise<string> {
  try {
    if (path === "-") return await new Response(Deno.stdin.readable).text();
    return await Deno.readTextFile(path);
  } catch (e) {
    throw new UsageError(
      `reading ${path === "-" ? "stdin" : `input file ${path}`}: ${(e as Error).message}`,
    );
  }
}

/** `fmt`. */
export const fmtCommand: Command = {
  name: "fmt",
  usage: "[--overwrite] [--diff] [<path>]",
  short: "Formats a Gatehousefile",
  long: [
    "Formats a Gatehousefile (Caddyfile syntax): one tab per nesting level, one space between",
    "words, braces and blank lines placed canonically; comments, quoted text and heredocs are kept.",
    "Prints the result to stdout. <path> defaults to the Gatehousefile (or Caddyfile) in the current",
    "directory; - reads stdin.",
    "",
    "--overwrite writes the result back to the file instead (regular files only).",
    "--diff prints the lines that change, prefixed with - and +, and unchanged lines with two",
    "spaces (not a patch format).",
    "",
    "Exits 1 when the input was not formatted, unless --overwrite is given.",
  ].join("\n"),
  flags: [
    { name: "overwrite", short: "w", type: "boolean", help: "Overwrite the file in place" },
    { name: "diff", short: "d", type: "boolean", help: "Print the differences as a line diff" },
  ],
  async run({ flags, args }) {
    if (args.length > 1) {
      throw new UsageError(`fmt formats one file at a time, got: ${args.join(" ")}`);
    }
    const path = args[0] ?? await findDefaultConfig();
    if (!path) {
      throw new UsageError(
        "fmt: no Gatehousefile or Caddyfile in the current directory; give a path or - for stdin",
      );
    }
    if (flags.overwrite && path === "-") {
      throw new UsageError("fmt: --overwrite needs a regular file, not stdin");
    }
    const input = await readInput(path);
    const output = formatGatehousefile(input);
    if (flags.overwrite) {
      try {
        const info = await Deno.stat(path);
        if (!info.isFile) throw new Error("not a regular file");
        if (output !== input) await Deno.writeTextFile(path, output);
      } catch (e) {
        throw new UsageError(`fmt: overwriting ${path}: ${(e as Error).message}`);
      }
      return ExitCode.Success;
    }
    if (flags.diff) {
      const lines = diffLines(input.split("\n"), output.split("\n"));
      console.log(lines.map((d) => `${d.op === " " ? " " : d.op} ${d.text}`).join("\n"));
    } else {
      await writeStdout(output);
    }
    const line = firstUnformattedLine(input);
    if (line !== undefined) {
      console.error(
        `${
          path === "-" ? "stdin" : path
        }:${line}: input is not formatted; use --overwrite to update the file in place, or --diff to see what changes`,
      );
      return ExitCode.Failure;
    }
    return ExitCode.Success;
  },
};

async function writeStdout(text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}
