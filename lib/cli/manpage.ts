/**
 * `gatehouse manpage --directory <path>`: writes roff manual pages generated from the
 * command declarations.
 *
 * @module
 */
import { type Command, commandFlags, defineCommand, ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";
import { VERSION } from "../version.ts";

function esc(s: string): string {
  return s.replaceAll("\\", "\\\\").replaceAll("-", "\\-").replace(/^\./gm, "\\&.");
}

/** Renders the man page of one command (or of `gatehouse` itself when `command` is undefined). */
export function renderManpage(command: Command | undefined, commands: Command[]): string {
  const name = command ? `gatehouse-${command.name.replaceAll(" ", "-")}` : "gatehouse";
  const lines = [
    `.TH "${name.toUpperCase()}" "8" "" "gatehouse ${VERSION}" "Gatehouse Manual"`,
    ".SH NAME",
    `${esc(name)} \\- ${
      esc(command ? command.short : "a web server with a JSON config tree and an admin API")
    }`,
    ".SH SYNOPSIS",
    command
      ? `\\fBgatehouse ${esc(command.name)}\\fR ${esc(command.usage)}`
      : "\\fBgatehouse\\fR <command> [<args...>]",
    ".SH DESCRIPTION",
    esc(
      command
        ? command.long ?? command.short
        : "Gatehouse runs web servers configured through a REST admin API.",
    ),
  ];
  if (command) {
    lines.push(".SH OPTIONS");
    for (const f of commandFlags(command)) {
      lines.push(
        ".TP",
        `${f.short ? `\\fB\\-${f.short}\\fR, ` : ""}\\fB\\-\\-${esc(f.name)}\\fR${
          f.type === "string" ? ` ${esc(f.value ?? "<value>")}` : ""
        }`,
        esc(f.help),
      );
    }
  }
  if (!command) {
    lines.push(".SH COMMANDS");
    for (const c of commands) lines.push(".TP", `\\fB${esc(c.name)}\\fR`, esc(c.short));
  }
  lines.push(
    ".SH SEE ALSO",
    commands.filter((c) => c !== command).map((c) =>
      `gatehouse\\-${esc(c.name.replaceAll(" ", "-"))}(8)`
    ).join(", "),
  );
  return lines.join("\n") + "\n";
}

/** `manpage`. */
export const manpageCommand: Command = defineCommand({
  name: "manpage",
  usage: "--directory <path>",
  short: "Generates the manual pages",
  long:
    "Writes a manual page for gatehouse and each command into the directory (created if missing).",
  flags: [{
    name: "directory",
    short: "o",
    type: "string",
    value: "<path>",
    help: "Directory to write the pages to (required)",
  }],
  async run({ flags }) {
    const dir = flags.directory;
    if (!dir) throw new UsageError("manpage: --directory is required");
    const { commands } = await import("./registry.ts");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(`${dir}/gatehouse.8`, renderManpage(undefined, commands));
    for (const c of commands) {
      await Deno.writeTextFile(
        `${dir}/gatehouse-${c.name.replaceAll(" ", "-")}.8`,
        renderManpage(c, commands),
      );
    }
    console.error(`gatehouse manpage: wrote ${commands.length + 1} pages to ${dir}`);
    return ExitCode.Success;
  },
});
