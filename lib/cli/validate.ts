/**
 * `gatehouse validate`: decodes, loads and provisions every module without starting.
 *
 * @module
 */
import { type Command, defineCommand, ExitCode } from "./command.ts";
import { Engine } from "../server/engine.ts";
import "../server/standard.ts";
import { findDefaultConfig, printWarnings, readConfigFile } from "./config_file.ts";
import { applyEnvFiles } from "./environ.ts";
import { UsageError } from "./usage_error.ts";
import { ADAPTER_FLAG, CONFIG_FLAG } from "./common_flags.ts";

/** Validates a loaded config; throws with the reason when invalid. */
export async function validateConfig(config: unknown): Promise<void> {
  const engine = new Engine({ defaultAdmin: false });
  try {
    await engine.validate(config);
  } finally {
    await engine.shutdown();
  }
}

/** `validate`. */
export const validateCommand: Command = defineCommand({
  name: "validate",
  usage: "--config <path> [--adapter <name>] [--envfile <path>]",
  short: "Tests whether a config is valid",
  long:
    "Deserializes the config, then loads and provisions all its modules as if to start it, but does not start it. Exits 0 when valid, 1 otherwise.",
  flags: [
    CONFIG_FLAG,
    ADAPTER_FLAG,
    {
      name: "envfile",
      type: "string",
      multiple: true,
      value: "<file>",
      help: "Load environment variables from a file",
    },
  ],
  async run({ flags }) {
    await applyEnvFiles(flags.envfile);
    const path = flags.config || await findDefaultConfig();
    if (!path) throw new UsageError("no config file to validate: use --config");
    const loaded = await readConfigFile(path, flags.adapter);
    printWarnings(loaded.warnings);
    try {
      await validateConfig(loaded.config);
    } catch (e) {
      console.error(`gatehouse validate: ${(e as Error).message}`);
      return ExitCode.Failure;
    }
    console.log("Valid configuration");
    return ExitCode.Success;
  },
});
