/**
 * `gatehouse untrust`: removes a CA root certificate from the local trust stores (the system
 * store and the NSS database), from a PEM file (`--cert`) or, by default, fetched from a
 * running server's admin API like `trust`. Certificate files in storage are not touched.
 *
 * @module
 */
import { type Command, defineCommand, ExitCode } from "./command.ts";
import { fetchRoot, TRUST_FLAGS } from "./trust.ts";
import { UsageError } from "./usage_error.ts";

/** `untrust`. */
export const untrustCommand: Command = defineCommand({
  name: "untrust",
  usage:
    "[--cert <path>] | [[--ca <id>] [--address <listen>] [--config <path> [--adapter <name>]]]",
  short: "Untrusts a locally-trusted CA certificate",
  long: [
    "Removes a root certificate from the local trust stores (system store and ~/.pki/nssdb).",
    "The certificate is the PEM file given with --cert, or else it is fetched from a running",
    "server's admin API (--ca, --address or --config, as for `trust`). Removing from the system",
    "store needs root. Certificate files in the configured storage are not deleted.",
  ].join("\n"),
  flags: [
    {
      name: "cert",
      short: "p",
      type: "string",
      value: "<path>",
      help: "The path to the CA certificate to untrust",
    },
    ...TRUST_FLAGS,
  ],
  async run({ flags, args }) {
    if (args.length) throw new UsageError(`untrust: unexpected argument "${args[0]}"`);
    let pem: string;
    let what: string;
    if (typeof flags.cert === "string" && flags.cert) {
      if (flags.address || flags.config || (flags.ca && flags.ca !== "local")) {
        throw new UsageError("untrust: --cert cannot be used with --ca, --address or --config");
      }
      try {
        pem = await Deno.readTextFile(flags.cert);
      } catch (e) {
        throw new UsageError(`untrust: reading ${flags.cert}: ${(e as Error).message}`);
      }
      what = flags.cert;
    } else {
      const root = await fetchRoot(flags);
      pem = root.pem;
      what = `the root of CA ${root.ca}`;
    }
    const { uninstallRoot, TrustStoreError } = await import("../server/pki/truststore.ts");
    try {
      const stores = await uninstallRoot(pem);
      console.error(
        stores.length
          ? `gatehouse untrust: removed ${what} from: ${stores.join(", ")}`
          : `gatehouse untrust: ${what} was not installed in any trust store`,
      );
    } catch (e) {
      if (e instanceof TrustStoreError) throw new UsageError(`untrust: ${e.message}`);
      throw e;
    }
    return ExitCode.Success;
  },
});
