/**
 * `gatehouse run`: runs the server in the foreground.
 *
 * @module
 */
import type { Command, Flags } from "./command.ts";
import { ExitCode } from "./command.ts";
import { Engine, type RunnerEngineOptions } from "../server/engine.ts";
import { autosavePath } from "../server/storage/dirs.ts";
import { defaultConfigFiles, readConfigFile } from "./config_file.ts";
import { defaultAdminAddress } from "./admin_client.ts";
import { ProcessLife } from "./process.ts";
import { applyEnvFiles, printEnviron } from "./environ.ts";
import { UsageError } from "./usage_error.ts";
import { ADAPTER_FLAG, CONFIG_FLAG } from "./common_flags.ts";
import { connectWorkers, workerPlan, WORKERS_FLAG } from "./workers.ts";
import { guardInspectorSignal } from "../inspector_signal.ts";

function str(v: Flags[string]): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** Removes temp files an interrupted autosave left behind (`autosave.json.tmp-*`). */
async function removeStaleTemps(path: string): Promise<void> {
  const slash = path.lastIndexOf("/");
  const dir = path.slice(0, slash);
  const prefix = path.slice(slash + 1) + ".tmp-";
  try {
    for await (const e of Deno.readDir(dir)) {
      if (e.name.startsWith(prefix)) await Deno.remove(`${dir}/${e.name}`).catch(() => {});
    }
  } catch { /* no config dir yet */ }
}

/** Reads the config `run` should start with (resume, `-c`, or the default text file). */
async function initialConfig(
  flags: Flags,
  engine: Engine,
): Promise<{ config: unknown; source?: string; text?: string }> {
  await removeStaleTemps(autosavePath());
  if (flags.resume) {
    const path = autosavePath();
    try {
      const text = await Deno.readTextFile(path);
      engine.log.info("resuming from last configuration", { autosave_file: path });
      return { config: JSON.parse(text), source: path };
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) {
        throw new UsageError(`reading autosaved config ${path}: ${(e as Error).message}`);
      }
      engine.log.info("no autosaved config to resume from", { autosave_file: path });
    }
  }
  let path = str(flags.config);
  if (path) {
    // Caddy's words: which file, with which adapter (empty: from its name)
    engine.log.info("using provided configuration", {
      config_file: path,
      config_adapter: str(flags.adapter) ?? "",
    });
  } else if (!str(flags.adapter)) {
    const [found, ...ignored] = await defaultConfigFiles();
    if (!found) return { config: null };
    path = found;
    engine.log.info(`using adjacent ${found}`, { config_file: `${Deno.cwd()}/${found}` });
    if (ignored.length > 0) {
      engine.log.warn(
        `${[found, ...ignored].join(" and ")} are both in the current directory: using ` +
          `${found}, not ${ignored.join(", ")} (name one with --config)`,
        { using: found, ignored },
      );
    }
  }
  if (!path) return { config: null };
  const loaded = await readConfigFile(path, str(flags.adapter));
  if (loaded.warnings.length) {
    for (const w of loaded.warnings) {
      engine.log.warn("adapter warning", { ...w, file: w.file ?? path });
    }
  }
  return { config: loaded.config, source: path, text: loaded.text };
}

async function pingback(address: string, nonce: Uint8Array): Promise<void> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(":")),
    Number(address.slice(address.lastIndexOf(":") + 1)),
  ];
  const conn = await Deno.connect({ hostname: host, port });
  try {
    await conn.write(nonce);
  } finally {
    conn.close();
  }
}

/** How often `--watch` reads the config file (Caddy polls once a second too). */
const WATCH_INTERVAL_MS = 1000;

/**
 * `--watch`: reads the config file once a second and reloads when its bytes change, as Caddy
 * does. Polling, not inotify: it sees editors that replace the file (write a new one and
 * rename it), needs no inotify instance (a busy machine runs out of them), and a half-written
 * file is read again on the next tick once the writer is done. `loaded` is the text the running
 * config was made from: a change made after it was read, even before watching began, reloads.
 */
function watch(path: string, loaded: string | undefined, flags: Flags, engine: Engine): () => void {
  let last = loaded;
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      let text: string;
      try {
        text = await Deno.readTextFile(path);
      } catch {
        return; // gone for a moment (an editor replacing it): the next tick reads it again
      }
      if (text === last) return;
      last = text;
      try {
        const loaded = await readConfigFile(path, str(flags.adapter));
        for (const w of loaded.warnings) {
          engine.log.warn("adapter warning", { ...w, file: w.file ?? path });
        }
        await engine.load(loaded.config);
        engine.log.info("config file reloaded", { file: path });
      } catch (e) {
        engine.log.error("reloading watched config file", { file: path, error: e as Error });
      }
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(tick, WATCH_INTERVAL_MS);
  engine.log.warn("watching config file for changes (local development only)", {
    file: path,
    interval: WATCH_INTERVAL_MS / 1000,
  });
  return () => clearInterval(timer);
}

/** Runs the server until it is told to exit; resolves to the exit code. */
export async function runServer(flags: Flags): Promise<number> {
  if (flags.worker !== undefined) return await runWorkerProcess(flags);
  await applyEnvFiles(flags.envfile);
  if (flags.environ) printEnviron();
  const plan = workerPlan(flags, "run");
  // the modules that provision and serve a config: this process's when it serves; the primary
  // of worker processes only holds the config (and writes the logs: its pipeline's modules
  // come with the pool), so it carries neither the http app nor TLS
  if (!plan.workers) await import("../server/standard.ts");
  const holder: { life?: ProcessLife } = {};
  const options: RunnerEngineOptions = {
    defaultAdmin: defaultAdminAddress(),
    autosavePath: autosavePath(),
    onStopRequest: () => holder.life?.exitGracefully("POST /stop"),
    runner: plan.workers,
  };
  const engine = new Engine(options);
  connectWorkers(plan.workers, engine);
  if (plan.single) engine.log.info("serving on one process", { reason: plan.single });
  const life = holder.life = new ProcessLife(engine, str(flags.pidfile));
  life.installSignals();
  let source: string | undefined;
  let sourceText: string | undefined;
  try {
    if (plan.workers) {
      await plan.workers.start();
      engine.log.info("worker processes started", {
        workers: plan.count,
        pids: plan.workers.info().filter((w) => w.worker > 0).map((w) => w.pid),
      });
    }
    const initial = await initialConfig(flags, engine);
    source = initial.source;
    sourceText = initial.text;
    await engine.load(initial.config, true);
  } catch (e) {
    life.removeSignals();
    await engine.shutdown(undefined, { exitCode: ExitCode.Failure });
    console.error(`gatehouse run: ${(e as Error).message}`);
    return ExitCode.Failure;
  }
  const pidfile = str(flags.pidfile);
  if (pidfile) {
    try {
      await Deno.writeTextFile(pidfile, `${Deno.pid}\n`, { mode: 0o600 });
    } catch (e) {
      engine.log.error("unable to write PID file", { pidfile, error: e as Error });
    }
  }
  let stopWatch: (() => void) | undefined;
  if (flags.watch && source && !flags.resume && source !== "-") {
    stopWatch = watch(source, sourceText, flags, engine);
  }
  const pb = str(flags.pingback);
  if (pb) {
    const nonce = new Uint8Array(await new Response(Deno.stdin.readable).arrayBuffer());
    try {
      await pingback(pb, nonce);
    } catch (e) {
      engine.log.error("pingback to start command failed", { error: e as Error });
      life.exitGracefully("pingback failed");
    }
  }
  engine.log.info("serving initial configuration");
  const code = await life.exited;
  stopWatch?.();
  return code;
}

/** `run --worker <n>`: a worker process of a primary `run` (see `lib/server/workers/`). */
async function runWorkerProcess(flags: Flags): Promise<number> {
  const index = Number(flags.worker);
  if (!Number.isInteger(index) || index < 0) {
    throw new UsageError(`run: --worker must be a worker number, got ${String(flags.worker)}`);
  }
  guardInspectorSignal();
  await import("../server/standard.ts");
  const { runWorker } = await import("../server/workers/worker.ts");
  return await runWorker(index);
}

/** `run`. */
export const runCommand: Command = {
  name: "run",
  usage:
    "[--config <path> [--adapter <name>]] [--envfile <path>] [--environ] [--resume] [--watch] [--pidfile <file>] [--workers <n>]",
  short: "Starts the server and blocks indefinitely",
  long: [
    "Starts the server in the foreground and runs until it is stopped (POST /stop, `gatehouse stop`,",
    "SIGINT, SIGTERM or SIGQUIT). With no config it runs an empty configuration with the default",
    "admin endpoint (GATEHOUSE_ADMIN or localhost:2019); a Gatehousefile in the current directory",
    "is loaded by default. --resume uses the last autosaved config and overrides --config.",
    "With more than one worker (by default one per CPU core), a primary process holds the config",
    "and the admin endpoint and worker processes serve; --workers 1 serves from one process.",
    "Exit codes: 0 normal, 1 startup failure, 2 forced exit, 3 failure during cleanup.",
  ].join("\n"),
  flags: [
    CONFIG_FLAG,
    ADAPTER_FLAG,
    { name: "pidfile", type: "string", value: "<file>", help: "Write the process id to this file" },
    { name: "environ", short: "e", type: "boolean", help: "Print the environment before starting" },
    {
      name: "envfile",
      type: "string",
      multiple: true,
      value: "<file>",
      help: "Load environment variables from a file",
    },
    { name: "resume", short: "r", type: "boolean", help: "Use the autosaved config, if any" },
    {
      name: "watch",
      short: "w",
      type: "boolean",
      help: "Reload when the config file changes (development)",
    },
    WORKERS_FLAG,
    {
      name: "pingback",
      type: "string",
      value: "<address>",
      help: "Internal: confirm startup to this address",
    },
    {
      name: "worker",
      type: "string",
      value: "<n>",
      help: "Internal: serve as worker process <n> (0: a spare) of the primary on stdin/stdout",
    },
  ],
  run: ({ flags }) => runServer(flags),
};
