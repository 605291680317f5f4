/**
 * `gatehouse completion [bash|zsh|fish|powershell]`, generated from the command declarations.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { commandFlags, ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";

function flagWords(c: Command): string[] {
  return commandFlags(c).flatMap((f) => [`--${f.name}`, ...(f.short ? [`-${f.short}`] : [])]);
}

/** Renders a completion script for `shell` from `commands`. */
export function renderCompletion(shell: string, commands: Command[]): string {
  const top = [...new Set(commands.map((c) => c.name.split(" ")[0]))];
  switch (shell) {
    case "bash": {
      const cases = commands.filter((c) => !c.name.includes(" ")).map((c) =>
        `    ${c.name}) opts="${flagWords(c).join(" ")}" ;;`
      );
      return [
        "# bash completion for gatehouse",
        "_gatehouse() {",
        '  local cur="${COMP_WORDS[COMP_CWORD]}" opts=""',
        "  if [ $COMP_CWORD -eq 1 ]; then",
        `    COMPREPLY=($(compgen -W "${top.join(" ")}" -- "$cur")); return`,
        "  fi",
        '  case "${COMP_WORDS[1]}" in',
        ...cases,
        "  esac",
        '  COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        "}",
        "complete -F _gatehouse gatehouse",
      ].join("\n");
    }
    case "zsh":
      return [
        "#compdef gatehouse",
        "_gatehouse() {",
        "  local -a cmds",
        "  cmds=(",
        ...commands.filter((c) => !c.name.includes(" ")).map((c) =>
          `    '${c.name}:${c.short.replaceAll("'", "")}'`
        ),
        "  )",
        "  if (( CURRENT == 2 )); then _describe 'command' cmds; return; fi",
        "  case $words[2] in",
        ...commands.filter((c) => !c.name.includes(" ")).map((c) =>
          `    ${c.name}) _arguments ${
            commandFlags(c).map((f) =>
              `'--${f.name}[${f.help.replaceAll("'", "").replaceAll("]", "")}]${
                f.type === "string" ? ":value:" : ""
              }'`
            ).join(" ")
          } ;;`
        ),
        "  esac",
        "}",
        "compdef _gatehouse gatehouse",
      ].join("\n");
    case "fish":
      return [
        "# fish completion for gatehouse",
        ...commands.filter((c) => !c.name.includes(" ")).map((c) =>
          `complete -c gatehouse -n "__fish_use_subcommand" -a ${c.name} -d '${
            c.short.replaceAll("'", "")
          }'`
        ),
        ...commands.filter((c) => !c.name.includes(" ")).flatMap((c) =>
          commandFlags(c).map((f) =>
            `complete -c gatehouse -n "__fish_seen_subcommand_from ${c.name}" -l ${f.name}${
              f.short ? ` -s ${f.short}` : ""
            }${f.type === "string" ? " -r" : ""} -d '${f.help.replaceAll("'", "")}'`
          )
        ),
      ].join("\n");
    case "powershell":
      return [
        "Register-ArgumentCompleter -Native -CommandName gatehouse -ScriptBlock {",
        "  param($wordToComplete, $commandAst, $cursorPosition)",
        "  $words = $commandAst.CommandElements | ForEach-Object { $_.ToString() }",
        "  $flags = @{",
        ...commands.filter((c) => !c.name.includes(" ")).map((c) =>
          `    '${c.name}' = @(${flagWords(c).map((w) => `'${w}'`).join(", ")})`
        ),
        "  }",
        `  $candidates = if ($words.Count -le 2) { @(${
          top.map((t) => `'${t}'`).join(", ")
        }) } else { $flags[$words[1]] }`,
        '  $candidates | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {',
        "    [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)",
        "  }",
        "}",
      ].join("\n");
    default:
      throw new UsageError(
        `completion: unsupported shell "${shell}"; use bash, zsh, fish or powershell`,
      );
  }
}

/** `completion`. */
export const completionCommand: Command = {
  name: "completion",
  usage: "[bash|zsh|fish|powershell]",
  short: "Generates a shell completion script",
  long:
    "Writes a completion script for the shell to stdout, e.g. `gatehouse completion bash > /etc/bash_completion.d/gatehouse`.",
  flags: [],
  async run({ args }) {
    const { commands } = await import("./registry.ts");
    console.log(renderCompletion(args[0] ?? "bash", commands));
    return ExitCode.Success;
  },
};
