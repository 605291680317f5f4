/**
 * `gatehouse adapt`: converts a config to native JSON.
 *
 * @module
 */
import { type Command, defineCommand, ExitCode } from "./command.ts";
import { findDefaultConfig, printWarnings, readConfigFile } from "./config_file.ts";
import { UsageError } from "./usage_error.ts";
import { validateConfig } from "./validate.ts";
import { reverseCommandRun } from "./adapt_reverse.ts";

/** `adapt`. */
export const adaptCommand: Command = defineCommand({
  name: "adapt",
  usage:
    "[--config <path>] [--adapter <name>] [--pretty] [--validate] | --reverse [--config <file.json>] [--address <interface>]",
  short: "Adapts a config to native JSON",
  long: [
    "Writes the native JSON form of a config to stdout and warnings to stderr, then exits.",
    "--validate also loads and provisions the result without running it (stricter than adapting).",
    "",
    "--reverse goes the other way: it turns native JSON (--config <file.json>, - for stdin, or the",
    "live config of the server whose admin endpoint is --address) into a formatted Gatehousefile on",
    "stdout. Parts with no Gatehousefile form are listed on stderr with their JSON path, and the",
    "exit code is 1; the text is then incomplete.",
  ].join("\n"),
  flags: [
    {
      name: "config",
      short: "c",
      type: "string",
      value: "<path>",
      help: "Config file (default: the Gatehousefile or Caddyfile in the current directory)",
    },
    {
      name: "adapter",
      short: "a",
      type: "string",
      value: "<name>",
      help: "Name of the config adapter",
      default: "gatehousefile",
    },
    { name: "pretty", short: "p", type: "boolean", help: "Indent the output" },
    { name: "validate", type: "boolean", help: "Validate the result" },
    { name: "reverse", type: "boolean", help: "Turn native JSON into a Gatehousefile" },
    {
      name: "address",
      type: "string",
      value: "<interface>",
      help: "With --reverse: read the live config from this admin endpoint",
    },
  ],
  async run({ flags }) {
    if (flags.reverse || flags.address) return await reverseCommandRun(flags);
    const path = flags.config || await findDefaultConfig();
    if (!path) {
      throw new UsageError(
        "adapt: no Gatehousefile or Caddyfile in the current directory; give one with --config",
      );
    }
    const loaded = await readConfigFile(path, flags.adapter);
    printWarnings(loaded.warnings);
    console.log(
      flags.pretty ? JSON.stringify(loaded.config, null, "\t") : JSON.stringify(loaded.config),
    );
    if (flags.validate) {
      try {
        await validateConfig(loaded.config);
      } catch (e) {
        console.error(`gatehouse adapt: validation: ${(e as Error).message}`);
        return ExitCode.Failure;
      }
    }
    return ExitCode.Success;
  },
});
