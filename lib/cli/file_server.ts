/**
 * `gatehouse file-server`: a static file server for the current directory (or `--root`) with
 * Zstandard and Gzip compression unless `--no-compress`, optional directory browsing, access
 * log and precompressed sidecars. The admin API is disabled. `file-server export-template`
 * prints the default browse template.
 *
 * @module
 */
import { type Command, defineCommand, ExitCode } from "./command.ts";
import { DEFAULT_BROWSE_TEMPLATE } from "../server/http/handlers/file_server/browse_template.ts";
import { debugLogging, NO_ADMIN, runQuickServer } from "./quick_server.ts";
import { UsageError } from "./usage_error.ts";
import { WORKERS_FLAG } from "./workers.ts";

/** Options of the generated file server config. */
export interface FileServerOptions {
  root: string;
  listen?: string;
  domain?: string;
  browse: boolean;
  revealSymlinks: boolean;
  accessLog: boolean;
  debug: boolean;
  compress: boolean;
  precompressed: string[];
}

/** Builds the config `file-server` runs. */
export function fileServerConfig(o: FileServerOptions): Record<string, unknown> {
  const listen = o.listen || (o.domain ? ":443" : ":80");
  const handle: Record<string, unknown>[] = [];
  if (o.compress) {
    handle.push({ handler: "encode", encodings: { gzip: {}, zstd: {} }, prefer: ["zstd", "gzip"] });
  }
  const fs: Record<string, unknown> = { handler: "file_server", root: o.root };
  if (o.browse) fs.browse = o.revealSymlinks ? { reveal_symlinks: true } : {};
  if (o.precompressed.length) {
    fs.precompressed = Object.fromEntries(o.precompressed.map((e) => [e, {}]));
    fs.precompressed_order = o.precompressed;
  }
  handle.push(fs);
  const route: Record<string, unknown> = { handle };
  if (o.domain) route.match = [{ host: [o.domain] }];
  const server: Record<string, unknown> = { listen: [listen], routes: [route] };
  if (o.accessLog) server.logs = {};
  return { ...NO_ADMIN, apps: { http: { servers: { static: server } } }, ...debugLogging(o.debug) };
}

/** `file-server`. */
export const fileServerCommand: Command = defineCommand({
  name: "file-server",
  usage:
    "[--domain <example.com>] [--root <path>] [--listen <addr>] [--browse] [--reveal-symlinks] [--access-log] [--precompressed <encoding>] [--no-compress] [--workers <n>]",
  short: "Spins up a production-ready file server",
  long: [
    "Serves static files from --root (default: the current directory) on --listen (default :80,",
    "or :443 with --domain). Zstandard and Gzip compression are on unless --no-compress;",
    "--precompressed serves .gz/.br/.zst sidecar files (repeatable, in order of preference).",
    "--browse lists directories without an index file; --reveal-symlinks shows link targets.",
    "The admin API is disabled. `file-server export-template` prints the browse template.",
  ].join("\n"),
  flags: [
    {
      name: "domain",
      short: "d",
      type: "string",
      value: "<example.com>",
      help: "Domain name at which to serve the files",
    },
    {
      name: "root",
      short: "r",
      type: "string",
      value: "<path>",
      help: "The path to the root of the site",
      default: ".",
    },
    {
      name: "listen",
      type: "string",
      value: "<addr>",
      help: "The address to which to bind the listener",
    },
    { name: "browse", short: "b", type: "boolean", help: "Enable directory browsing" },
    {
      name: "reveal-symlinks",
      type: "boolean",
      help: "Show symlink targets in directory listings",
    },
    {
      name: "templates",
      short: "t",
      type: "boolean",
      help: "Enable template rendering (not supported)",
    },
    { name: "access-log", type: "boolean", help: "Enable the access log" },
    WORKERS_FLAG,
    { name: "debug", short: "v", type: "boolean", help: "Enable verbose debug logs" },
    { name: "no-compress", type: "boolean", help: "Disable Zstandard and Gzip compression" },
    {
      name: "precompressed",
      short: "p",
      type: "string",
      multiple: true,
      value: "<encoding>",
      help: "Serve precompressed files (gzip, br, zstd; repeatable)",
    },
  ],
  async run({ flags, args }) {
    if (args.length) throw new UsageError(`file-server: unexpected argument "${args[0]}"`);
    if (flags.templates) {
      console.error("file-server: --templates is not supported by gatehouse");
      return ExitCode.Failure;
    }
    const precompressed = flags.precompressed ?? [];
    for (const p of precompressed) {
      if (!["gzip", "br", "zstd"].includes(p)) {
        throw new UsageError(`file-server: unknown precompressed encoding ${p}`);
      }
    }
    const listen = typeof flags.listen === "string" ? flags.listen : undefined;
    const domain = typeof flags.domain === "string" ? flags.domain : undefined;
    const config = fileServerConfig({
      root: String(flags.root ?? "."),
      listen,
      domain,
      browse: !!flags.browse,
      revealSymlinks: !!flags["reveal-symlinks"],
      accessLog: !!flags["access-log"],
      debug: !!flags.debug,
      compress: !flags["no-compress"],
      precompressed,
    });
    // as Caddy: one log record saying where it serves
    const where = listen || (domain ? ":443" : ":80");
    return await runQuickServer(
      config,
      ({ engine }) => engine.log.info(`Gatehouse serving static files on ${where}`),
      flags,
      "file-server",
    );
  },
});

/** `file-server export-template`. */
export const fileServerExportTemplateCommand: Command = {
  name: "file-server export-template",
  usage: "",
  short: "Exports the default file browser template",
  flags: [],
  async run() {
    await Deno.stdout.write(new TextEncoder().encode(DEFAULT_BROWSE_TEMPLATE));
    return ExitCode.Success;
  },
};
