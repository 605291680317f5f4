/**
 * Runs a generated config in the foreground for the quick-server commands (`file-server`,
 * `reverse-proxy`, `respond`): no admin endpoint, no autosave, the signals and exit codes of
 * `run`.
 *
 * @module
 */
import { Engine, type RunnerEngineOptions } from "../server/engine.ts";
import "../server/standard.ts";
import { runningHttpApps } from "../server/http/app.ts";
import { ExitCode, type Flags } from "./command.ts";
import { ProcessLife } from "./process.ts";
import { connectWorkers, workerPlan } from "./workers.ts";

/** What a quick server is told once it serves. */
export interface QuickServerStarted {
  /** The engine holding the config. */
  engine: Engine;
  /** The bound listen addresses by server name (the real port where `:0` was asked). */
  listenAddresses(): Record<string, string[]>;
}

/**
 * Loads `config` and serves until a signal; `onStarted` runs once it serves. `flags.workers`
 * (or `GATEHOUSE_WORKERS`) sets how many worker processes serve, as for `run`. A failed start
 * prints the error and resolves to 1 (the exit code the log reports too).
 *
 * @example
 * ```ts ignore
 * import { runQuickServer } from "./quick_server.ts";
 * await runQuickServer({ apps: { http: { servers: {} } } });
 * ```
 */
export async function runQuickServer(
  config: Record<string, unknown>,
  onStarted?: (started: QuickServerStarted) => void,
  flags: Flags = {},
  command = "serve",
): Promise<number> {
  const plan = workerPlan(flags, command);
  const options: RunnerEngineOptions = {
    defaultAdmin: false,
    autosavePath: false,
    runner: plan.workers,
  };
  const engine = new Engine(options);
  connectWorkers(plan.workers, engine);
  const life = new ProcessLife(engine);
  life.installSignals();
  try {
    await plan.workers?.start();
    await engine.load(config, true);
  } catch (e) {
    life.removeSignals();
    await engine.shutdown(undefined, { exitCode: ExitCode.Failure });
    console.error((e as Error).message);
    return ExitCode.Failure;
  }
  onStarted?.({
    engine,
    listenAddresses: () => {
      if (plan.workers) return plan.workers.listenAddresses();
      const out: Record<string, string[]> = {};
      for (const app of runningHttpApps()) Object.assign(out, app.listenAddresses());
      return out;
    },
  });
  return await life.exited;
}

/** Parses `Field: value` header flags into a map for header operations. */
export function parseHeaderFlags(values: string[], flag: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  values.forEach((h, i) => {
    const colon = h.indexOf(":");
    const key = colon < 0 ? "" : h.slice(0, colon).trim();
    const val = colon < 0 ? "" : h.slice(colon + 1).trim();
    if (!key || !val) {
      throw new Error(`${flag} ${i}: invalid format "${h}" (expecting "Field: value")`);
    }
    (out[key] ??= []).push(val);
  });
  return out;
}

/** The `logging` section for `--debug`. */
export function debugLogging(debug: unknown): Record<string, unknown> {
  return debug ? { logging: { logs: { default: { level: "DEBUG" } } } } : {};
}

/** The config-wide part every quick server shares: admin off, nothing persisted. */
export const NO_ADMIN: Record<string, unknown> = {
  admin: { disabled: true, config: { persist: false } },
};
