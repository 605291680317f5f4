/**
 * `gatehouse storage export` and `gatehouse storage import` (experimental): copy the storage a
 * config names (its `storage` section; `file_system` under the data directory by default) to or
 * from a tarball, `-` being standard output or input. Messages go to standard error, so an
 * export can be piped: `gatehouse storage export -c a.json -o - | gatehouse storage import -c
 * b.json -i -`.
 *
 * @module
 */
import type { Command, CommandGroup, Flags } from "./command.ts";
import { ExitCode } from "./command.ts";
import { readConfigFile } from "./config_file.ts";
import { UsageError } from "./usage_error.ts";
import { ConfigContext } from "../server/context.ts";
import "../server/standard.ts";
import { ListenerPool } from "../server/listeners/pool.ts";
import type { Storage } from "../server/module/storage.ts";
import { exportStorage, importStorage } from "../server/storage/transfer.ts";

function required(flags: Flags, name: string, command: string): string {
  const v = flags[name];
  if (typeof v !== "string" || v === "") {
    throw new UsageError(`storage ${command}: --${name} is required`);
  }
  return v;
}

/** Opens the storage of the config at `path`; `use` runs with it, then it is released. */
async function withConfigStorage<T>(path: string, use: (s: Storage) => Promise<T>): Promise<T> {
  const { config } = await readConfigFile(path);
  const storage = (config as { storage?: unknown } | null)?.storage;
  const ctx = new ConfigContext(
    storage === undefined || storage === null ? {} : { storage: storage as never },
    new ListenerPool(),
  );
  try {
    await ctx.provision();
  } catch (e) {
    await ctx.cleanup().catch(() => {});
    throw new UsageError(`${path}: storage: ${(e as Error).message}`);
  }
  try {
    return await use(ctx.storage);
  } finally {
    await ctx.cleanup().catch(() => {});
  }
}

const CONFIG = {
  name: "config",
  short: "c",
  type: "string",
  value: "<path>",
  help: "Config file whose storage is used (required)",
} as const;

/** `storage`: the group of `storage export` and `storage import`. */
export const storageGroup: CommandGroup = {
  name: "storage",
  short: "Copies the configured storage to or from a tarball (experimental)",
  long: [
    "Exports the storage a config names (certificates, keys, the CA, ACME accounts) to a tar",
    "archive, or imports such an archive into it.",
  ].join("\n"),
};

/** `storage export`. */
export const storageExportCommand: Command = {
  name: "storage export",
  usage: "--config <path> --output <path>",
  short: "Exports the contents of the configured storage to a tarball (experimental)",
  long: [
    "Writes every key of the storage the config names (certificates, keys, the CA, ACME",
    "accounts) to a tar archive; --output - writes to standard output. Locks are not exported.",
  ].join("\n"),
  flags: [
    CONFIG,
    {
      name: "output",
      short: "o",
      type: "string",
      value: "<path>",
      help: "The tarball to write (- for stdout) (required)",
    },
  ],
  async run({ flags, args }) {
    if (args.length) throw new UsageError(`storage export: unexpected argument "${args[0]}"`);
    const config = required(flags, "config", "export");
    const output = required(flags, "output", "export");
    const n = await withConfigStorage(config, async (storage) => {
      let out: WritableStream<Uint8Array>;
      if (output === "-") out = Deno.stdout.writable;
      else {
        try {
          out =
            (await Deno.open(output, { write: true, create: true, truncate: true, mode: 0o600 }))
              .writable;
        } catch (e) {
          throw new UsageError(`opening output file ${output}: ${(e as Error).message}`);
        }
      }
      return await exportStorage(storage, out, (m) => console.error(`[WARNING] ${m}`));
    });
    console.error(`gatehouse storage export: exported ${n} keys`);
    return ExitCode.Success;
  },
};

/** `storage import`. */
export const storageImportCommand: Command = {
  name: "storage import",
  usage: "--config <path> --input <path>",
  short: "Imports a tarball into the configured storage (experimental)",
  long: [
    "Stores every file of a tar archive made by `storage export` into the storage the config",
    "names, replacing keys that exist; --input - reads standard input. A malformed archive",
    "writes nothing.",
  ].join("\n"),
  flags: [
    CONFIG,
    {
      name: "input",
      short: "i",
      type: "string",
      value: "<path>",
      help: "The tarball to read (- for stdin) (required)",
    },
  ],
  async run({ flags, args }) {
    if (args.length) throw new UsageError(`storage import: unexpected argument "${args[0]}"`);
    const config = required(flags, "config", "import");
    const input = required(flags, "input", "import");
    const n = await withConfigStorage(config, async (storage) => {
      let stream: ReadableStream<Uint8Array>;
      if (input === "-") stream = Deno.stdin.readable;
      else {
        try {
          stream = (await Deno.open(input, { read: true })).readable;
        } catch (e) {
          throw new UsageError(`opening input file ${input}: ${(e as Error).message}`);
        }
      }
      try {
        return await importStorage(storage, stream);
      } catch (e) {
        throw new UsageError(`reading archive ${input}: ${(e as Error).message}`);
      }
    });
    console.error(`gatehouse storage import: imported ${n} keys`);
    return ExitCode.Success;
  },
};
