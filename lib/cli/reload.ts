/**
 * `gatehouse reload`: same effect as POST /load.
 *
 * @module
 */
import { type Command, defineCommand, ExitCode } from "./command.ts";
import { adminAddressFrom, adminRequest } from "./admin_client.ts";
import { findDefaultConfig, printWarnings, readConfigFile } from "./config_file.ts";
import { UsageError } from "./usage_error.ts";
import { ADAPTER_FLAG, CONFIG_FLAG } from "./common_flags.ts";

/** `reload`. */
export const reloadCommand: Command = defineCommand({
  name: "reload",
  usage: "--config <path> [--adapter <name>] [--address <interface>] [--force]",
  short: "Changes the config of the running server",
  long: [
    "Loads a config into the running server through POST /load on its admin endpoint and",
    "blocks until the reload completed or failed (the old config then keeps running). With no",
    "--config the Gatehousefile in the current directory is used; no file is an error.",
    "--force reloads even when the config is unchanged.",
  ].join("\n"),
  flags: [
    CONFIG_FLAG,
    ADAPTER_FLAG,
    {
      name: "address",
      type: "string",
      value: "<interface>",
      help: "The admin endpoint address (TCP)",
    },
    {
      name: "force",
      short: "f",
      type: "boolean",
      help: "Reload even when the config is unchanged",
    },
  ],
  async run({ flags }) {
    const path = flags.config || await findDefaultConfig();
    if (!path) {
      throw new UsageError("no config file to load: use --config or add a Gatehousefile here");
    }
    const loaded = await readConfigFile(path, flags.adapter);
    printWarnings(loaded.warnings);
    const address = adminAddressFrom(flags.address, loaded.config);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (flags.force) headers["cache-control"] = "must-revalidate";
    const res = await adminRequest(address, "POST", "/load", {
      body: JSON.stringify(loaded.config),
      headers,
    });
    await res.body?.cancel();
    console.error(`gatehouse reload: config loaded into ${address}`);
    return ExitCode.Success;
  },
});
