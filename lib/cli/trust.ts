/**
 * `gatehouse trust`: installs the root certificate of a CA (default `local`) into the local
 * trust stores, fetched from a running server's admin API (`GET /pki/ca/<id>/certificates`).
 * The admin address comes from `--address`, else the config given with `--config`, else
 * `GATEHOUSE_ADMIN`, else `localhost:2019`. Stores: the Debian system store (needs root) and
 * the NSS database Chromium uses (`~/.pki/nssdb`, when `certutil` is installed).
 *
 * @module
 */
import { type Command, defineCommand, ExitCode, type FlagsOf, type FlagSpec } from "./command.ts";
import { adminAddressFrom, adminRequest } from "./admin_client.ts";
import { readConfigFile } from "./config_file.ts";
import { ADAPTER_FLAG } from "./common_flags.ts";
import { UsageError } from "./usage_error.ts";

/** Flags `trust` and `untrust` share. */
export const TRUST_FLAGS = [
  { name: "ca", type: "string", value: "<id>", help: "The ID of the CA", default: "local" },
  {
    name: "address",
    type: "string",
    value: "<interface>",
    help: "Address of the administration API listener (if --config is not used)",
  },
  {
    name: "config",
    short: "c",
    type: "string",
    value: "<path>",
    help: "Configuration file (if --address is not used)",
  },
  ADAPTER_FLAG,
] as const satisfies readonly FlagSpec[];

/** The root certificate (last PEM block of the chain) of CA `--ca` from the admin API. */
export async function fetchRoot(
  flags: FlagsOf<typeof TRUST_FLAGS>,
): Promise<{ pem: string; ca: string; address: string }> {
  const ca = typeof flags.ca === "string" && flags.ca ? flags.ca : "local";
  if (flags.address && flags.config) {
    throw new UsageError("use --address or --config, not both");
  }
  const config = typeof flags.config === "string" && flags.config
    ? (await readConfigFile(flags.config, flags.adapter)).config
    : null;
  const address = adminAddressFrom(flags.address, config);
  const res = await adminRequest(address, "GET", `/pki/ca/${encodeURIComponent(ca)}/certificates`);
  const chain = await res.text();
  const start = chain.lastIndexOf("-----BEGIN CERTIFICATE-----");
  if (start < 0) {
    throw new UsageError(`admin endpoint ${address} returned no certificate for CA ${ca}`);
  }
  return { pem: chain.slice(start), ca, address };
}

/** `trust`. */
export const trustCommand: Command = defineCommand({
  name: "trust",
  usage: "[--ca <id>] [--address <listen>] [--config <path> [--adapter <name>]]",
  short: "Installs a CA certificate into local trust stores",
  long: [
    "Adds the root certificate of a CA (default: local) of a running server to the local trust",
    "stores, so browsers and tools trust the certificates it issues: the system store",
    "(Debian: /usr/local/share/ca-certificates + update-ca-certificates; needs root, e.g. sudo)",
    "and the NSS database Chromium uses (~/.pki/nssdb) when certutil is installed.",
    "The certificate is fetched from the admin API: --address, else the admin address of",
    "--config, else GATEHOUSE_ADMIN, else localhost:2019. Undo with `gatehouse untrust`.",
  ].join("\n"),
  flags: TRUST_FLAGS,
  async run({ flags, args }) {
    if (args.length) throw new UsageError(`trust: unexpected argument "${args[0]}"`);
    const root = await fetchRoot(flags);
    const { installRoot, TrustStoreError } = await import("../server/pki/truststore.ts");
    try {
      const stores = await installRoot(root.pem, root.ca);
      console.error(
        `gatehouse trust: installed the root of CA ${root.ca} in: ${stores.join(", ")}`,
      );
    } catch (e) {
      if (e instanceof TrustStoreError) throw new UsageError(`trust: ${e.message}`);
      throw e;
    }
    return ExitCode.Success;
  },
});
