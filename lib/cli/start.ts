/**
 * `gatehouse start`: runs the server in the background and returns once it runs or failed.
 * The background process confirms a successful start by connecting back to a one-time
 * loopback address and echoing a random nonce it received on stdin.
 *
 * @module
 */
import { type Command, defineCommand, ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";
import { ADAPTER_FLAG } from "./common_flags.ts";
import { installedEntry } from "./plugins.ts";
import { WORKERS_FLAG } from "./workers.ts";
import { SERVER_V8_FLAGS } from "../server/workers/count.ts";

/**
 * V8 flags of the background server when `DENO_V8_FLAGS` does not say otherwise (see
 * `lib/server/workers/count.ts` and docs/server.md, "Memory").
 */
export { SERVER_V8_FLAGS };

function cliInvocation(): string[] {
  const cli = new URL("../../cli.ts", import.meta.url);
  // --unstable-net: HTTPS listeners of the deno engine replace themselves on a shared port
  // (SO_REUSEPORT) when certificates change, and worker processes share listening addresses.
  // --unstable-lazy-dynamic-imports: the modules of commands `run` never imports are not
  // loaded (Deno loads every statically named dynamic import first otherwise: ~5 MiB more).
  // --unstable-no-legacy-abort: a request's signal aborts when its client leaves, not also
  // after every answer (the reverse proxy watches it; Deno warns about the legacy behaviour).
  const args = [
    "run",
    "-A",
    "--unstable-net",
    "--unstable-lazy-dynamic-imports",
    "--unstable-no-legacy-abort",
  ];
  if (!Deno.env.get("DENO_V8_FLAGS")) args.push(`--v8-flags=${SERVER_V8_FLAGS}`);
  const installed = installedEntry(); // an installed gatehouse: its entry loads its plugins
  if (installed) args.push("--config", installed.config, installed.entry);
  else if (cli.protocol === "file:") {
    const cfg = new URL("../../deno.json", import.meta.url);
    try {
      Deno.statSync(cfg);
      args.push("--config", cfg.pathname);
    } catch { /* published: no config file */ }
    args.push(cli.pathname);
  } else args.push(cli.href);
  return args;
}

/** `start`. */
export const startCommand: Command = defineCommand({
  name: "start",
  usage:
    "[--config <path> [--adapter <name>]] [--envfile <path>] [--watch] [--pidfile <file>] [--workers <n>]",
  short: "Starts the server in the background and returns",
  long: [
    "Starts the server as a background process and returns once it runs (exit 0) or failed to",
    "start (exit 1). Stop it with `gatehouse stop` or POST /stop. Reading the config from stdin",
    "is not supported. Not for service managers: use `run` there.",
  ].join("\n"),
  flags: [
    { name: "config", short: "c", type: "string", value: "<path>", help: "Config file" },
    ADAPTER_FLAG,
    {
      name: "envfile",
      type: "string",
      multiple: true,
      value: "<file>",
      help: "Load environment variables from a file",
    },
    { name: "pidfile", type: "string", value: "<file>", help: "Write the process id to this file" },
    {
      name: "watch",
      short: "w",
      type: "boolean",
      help: "Reload when the config file changes (development)",
    },
    WORKERS_FLAG,
  ],
  async run({ flags }) {
    if (Deno.build.os === "windows") {
      throw new UsageError("start is not supported on Windows; use run");
    }
    if (flags.config === "-") {
      throw new UsageError("start: reading the config from stdin is not supported");
    }
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const nonce = crypto.getRandomValues(new Uint8Array(32));
    const args = [...cliInvocation(), "run", "--pingback", `127.0.0.1:${listener.addr.port}`];
    for (const name of ["config", "adapter", "pidfile", "workers"] as const) {
      const value = flags[name];
      if (value) args.push(`--${name}`, value);
    }
    for (const f of flags.envfile ?? []) args.push("--envfile", f);
    if (flags.watch) args.push("--watch");
    const child = new Deno.Command(Deno.execPath(), {
      args,
      stdin: "piped",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(nonce);
    await w.close();
    const confirmed = (async () => {
      for (;;) {
        const conn = await listener.accept();
        const got = new Uint8Array(await new Response(conn.readable).arrayBuffer());
        if (got.length === nonce.length && got.every((b, i) => b === nonce[i])) return true;
      }
    })();
    const result = await Promise.race([
      confirmed.then(() => "ok" as const),
      child.status.then((s) => s),
    ]);
    listener.close();
    await confirmed.catch(() => {});
    if (result === "ok") {
      child.unref();
      console.log(
        `Successfully started gatehouse (pid=${child.pid}) - gatehouse is running in the background`,
      );
      return ExitCode.Success;
    }
    console.error(`gatehouse start: the background process exited with status ${result.code}`);
    return ExitCode.Failure;
  },
});
