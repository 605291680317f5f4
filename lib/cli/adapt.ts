/**
 * `gatehouse adapt`: converts a config to native JSON.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { printWarnings, readConfigFile } from "./config_file.ts";
import { validateConfig } from "./validate.ts";

/** `adapt`. */
export const adaptCommand: Command = {
  name: "adapt",
  usage: "[--config <path>] [--adapter <name>] [--pretty] [--validate]",
  short: "Adapts a config to native JSON",
  long: [
    "Writes the native JSON form of a config to stdout and warnings to stderr, then exits.",
    "--validate also loads and provisions the result without running it (stricter than adapting).",
  ].join("\n"),
  flags: [
    {
      name: "config",
      short: "c",
      type: "string",
      value: "<path>",
      help: "Config file",
      default: "Gatehousefile",
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
  ],
  async run({ flags }) {
    const loaded = await readConfigFile(flags.config as string, flags.adapter as string);
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
};
