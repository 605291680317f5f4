/**
 * The `--workers` flag of the serving commands (`run`, `start`, `file-server`, `reverse-proxy`,
 * `respond`): how many worker processes serve, and the pool that runs them.
 *
 * @module
 */
import type { Flags, FlagSpec } from "./command.ts";
import { UsageError } from "./usage_error.ts";
import {
  availableCores,
  parseWorkers,
  SPARE_ENV,
  workerCommand,
  WORKERS_ENV,
} from "../server/workers/count.ts";
import { Workers } from "../server/workers/primary.ts";
import type { Engine } from "../server/engine.ts";

/** `--workers <n>`. */
export const WORKERS_FLAG = {
  name: "workers",
  type: "string",
  value: "<n|auto>",
  help:
    `Worker processes serving HTTP (default: ${WORKERS_ENV}, else auto: one per CPU core this process may use; 1: one process)`,
} as const satisfies FlagSpec;

/** How many processes serve, and why when fewer than asked. */
export interface WorkerPlan {
  /** 1: this process serves (no workers); more: a primary and that many workers. */
  count: number;
  /** The pool, when `count` > 1. */
  workers?: Workers;
  /** Why one process serves although `auto` would have asked for more. */
  single?: string;
}

/**
 * Reads `--workers` (then `GATEHOUSE_WORKERS`, then `auto`) and makes the worker pool. A count
 * that does not parse, or more than one worker where workers are impossible (not Linux, a
 * program compiled without `--unstable-net`) when asked for explicitly, is a UsageError; with
 * `auto` one process serves then and `single` says why.
 */
export function workerPlan(flags: Flags, command: string): WorkerPlan {
  const flag = typeof flags.workers === "string" ? flags.workers : undefined;
  const env = Deno.env.get(WORKERS_ENV);
  let asked: number | "auto";
  try {
    asked = flag !== undefined
      ? parseWorkers(flag, `${command}: --workers`)
      : env !== undefined && env !== ""
      ? parseWorkers(env, `${command}: ${WORKERS_ENV}`)
      : "auto";
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const count = asked === "auto" ? availableCores() : asked;
  if (count === 1) return { count: 1 };
  const cmd = workerCommand();
  if (typeof cmd === "string") {
    if (asked !== "auto") throw new UsageError(`${command}: ${count} workers: ${cmd}`);
    return { count: 1, single: cmd };
  }
  const spare = Deno.env.get(SPARE_ENV);
  if (spare !== undefined && spare !== "0" && spare !== "1") {
    throw new UsageError(`${command}: ${SPARE_ENV} must be 0 or 1, got ${JSON.stringify(spare)}`);
  }
  return { count, workers: new Workers({ count, command: cmd, spare: spare === "1" }) };
}

/**
 * Ties a worker pool to the engine it runs configs for: the pool logs through the engine's
 * logger, and reloads the running config on every worker when one revoked a certificate.
 */
export function connectWorkers(workers: Workers | undefined, engine: Engine): void {
  if (!workers) return;
  workers.log = engine.log.named("workers");
  workers.reload = () => engine.load(engine.config, true);
}
