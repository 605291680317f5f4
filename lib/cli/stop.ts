/**
 * `gatehouse stop`: graceful stop through POST /stop.
 *
 * @module
 */
import { type Command, defineCommand, ExitCode } from "./command.ts";
import { adminAddressFrom, adminRequest } from "./admin_client.ts";
import { readConfigFile } from "./config_file.ts";
import { ADAPTER_FLAG } from "./common_flags.ts";

/** `stop`. */
export const stopCommand: Command = defineCommand({
  name: "stop",
  usage: "[--address <interface>] [--config <path> [--adapter <name>]]",
  short: "Gracefully stops a started server",
  long: [
    "Stops a running server through POST /stop on its admin endpoint. The address comes from",
    "--address, else from the config given with --config (admin.listen), else GATEHOUSE_ADMIN,",
    "else localhost:2019.",
  ].join("\n"),
  flags: [
    { name: "address", type: "string", value: "<interface>", help: "The admin endpoint address" },
    {
      name: "config",
      short: "c",
      type: "string",
      value: "<path>",
      help: "Config file to read the admin address from",
    },
    ADAPTER_FLAG,
  ],
  async run({ flags }) {
    const config = typeof flags.config === "string" && flags.config
      ? (await readConfigFile(flags.config, flags.adapter)).config
      : null;
    const address = adminAddressFrom(flags.address, config);
    await adminRequest(address, "POST", "/stop");
    console.error(`gatehouse stop: stopped the server at ${address}`);
    return ExitCode.Success;
  },
});
