/**
 * How many worker processes serve, and the command line that starts one.
 *
 * @module
 */
import { reusePortAvailable } from "../listeners/deno/listener.ts";

/** The most worker processes a server runs. */
export const MAX_WORKERS = 256;

/** The environment variable that sets the number of workers (the `--workers` flag wins). */
export const WORKERS_ENV = "GATEHOUSE_WORKERS";

/** `1` keeps a spare worker booted (see `WorkersOptions.spare`); `0`, the default, none. */
export const SPARE_ENV = "GATEHOUSE_SPARE_WORKER";

export { WORKER_ENV } from "../module/worker_id.ts";

/** The CPUs of a Linux CPU list (`0-3,8,10-11`). */
export function cpuListSize(list: string): number {
  let n = 0;
  for (const part of list.trim().split(",")) {
    if (!part) continue;
    const [a, b] = part.split("-").map(Number);
    if (!Number.isInteger(a) || (b !== undefined && !Number.isInteger(b))) return 0;
    n += b === undefined ? 1 : b - a + 1;
  }
  return n;
}

/**
 * The cores this process may use: the CPUs it may run on (its affinity: `Cpus_allowed_list` of
 * `/proc/self/status`, what `taskset` and cpusets set, as nginx's `worker_processes auto`
 * reads it), no more than its cgroup's CPU quota allows (`cpu.max` of cgroup v2, rounded up:
 * a container limited to 1.5 CPUs gets 2). Elsewhere than on Linux, or when neither can be
 * read: `navigator.hardwareConcurrency`.
 */
export function availableCores(): number {
  let cores = 0;
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    const list = /^Cpus_allowed_list:\s*(.+)$/m.exec(status)?.[1];
    if (list) cores = cpuListSize(list);
  } catch { /* not Linux, or not allowed to read it */ }
  if (cores <= 0) cores = navigator.hardwareConcurrency || 1;
  try {
    const cgroup = Deno.readTextFileSync("/proc/self/cgroup");
    const path = /^0::(.*)$/m.exec(cgroup)?.[1];
    if (path !== undefined) {
      const [quota, period] = Deno.readTextFileSync(`/sys/fs/cgroup${path}/cpu.max`).trim()
        .split(/\s+/);
      if (quota !== "max" && Number(quota) > 0 && Number(period) > 0) {
        cores = Math.min(cores, Math.ceil(Number(quota) / Number(period)));
      }
    }
  } catch { /* no cgroup v2 quota */ }
  return Math.max(1, cores);
}

/**
 * Parses a worker count (`--workers`, `GATEHOUSE_WORKERS`): an integer from 1 to
 * {@linkcode MAX_WORKERS}, or `auto` (the default: {@linkcode availableCores}).
 * Throws an Error naming `where` otherwise.
 */
export function parseWorkers(raw: string, where: string): number | "auto" {
  const text = raw.trim();
  if (text === "auto") return "auto";
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_WORKERS) {
    throw new Error(
      `${where}: the number of worker processes must be 1 to ${MAX_WORKERS} or auto, got ${
        JSON.stringify(raw)
      }`,
    );
  }
  return Number(text);
}

const LAZY = "--unstable-lazy-dynamic-imports";

/**
 * V8 flags of a serving process when neither its command line nor `DENO_V8_FLAGS` gives any:
 * a young-generation semi-space of at most 2 MiB (V8 grows it to 16 MiB under sustained load,
 * most of a busy server's growth). `gatehouse start` runs its server with them, and `run`'s
 * worker processes get them. V8's `--optimize-for-size` is left out on purpose: it saved
 * another 10–25 MiB but cost the reverse proxy 50–80% more CPU per request and 4x its p99
 * (docs/server.md, "Memory").
 */
export const SERVER_V8_FLAGS = "--max-semi-space-size=2";

/**
 * Deno flags a worker must not inherit: a worker that restarts itself on file changes, and the
 * inspector's (each worker would listen on the primary's debugger address, which it holds, and
 * `--inspect-brk` or `--inspect-wait` would keep it waiting for a debugger).
 */
const NOT_INHERITED = /^--(watch(=|-hmr|-exclude|$)|inspect(-brk|-wait)?(=|$))/;

/**
 * The command line that starts a worker process of this program (the same Deno, flags and
 * entry script, so plugins a custom entry registers are there too), without the program's own
 * arguments; or a sentence saying why workers are impossible here. Linux only: it reads
 * `/proc/self/cmdline`, and the listeners share ports with SO_REUSEPORT, which spreads
 * connections over the processes only there. A `deno run` worker gets `--unstable-net` (what
 * `Deno.serve({ reusePort })` needs) and `--unstable-lazy-dynamic-imports`, and
 * {@linkcode SERVER_V8_FLAGS} unless the program was given V8 flags (`--v8-flags`,
 * `DENO_V8_FLAGS`, which the worker inherits); a compiled program must have been compiled with
 * `--unstable-net`.
 */
export function workerCommand(): string[] | string {
  if (Deno.build.os !== "linux") {
    return "worker processes need Linux (SO_REUSEPORT spreads connections only there)";
  }
  if (Deno.build.standalone) {
    return reusePortAvailable()
      ? [Deno.execPath()]
      : "this program was compiled without --unstable-net, which shared listening needs";
  }
  let argv: string[];
  try {
    argv = Deno.readTextFileSync("/proc/self/cmdline").split("\0");
  } catch (e) {
    return `the command line of this process cannot be read (${(e as Error).message})`;
  }
  if (argv.at(-1) === "") argv.pop();
  const prefix = argv.slice(0, argv.length - Deno.args.length);
  if (prefix[1] !== "run" || prefix.length < 3) {
    return "this process was not started with `deno run`";
  }
  const flags = prefix.slice(2, -1).filter((f) => !NOT_INHERITED.test(f));
  if (!flags.some((f) => f === "--unstable-net" || f === "--unstable")) {
    flags.unshift("--unstable-net");
  }
  // Deno loads the modules of every statically named dynamic import before the program starts
  // (for `cli.ts`, every command's): a worker loads each when it imports it, which takes ~10
  // MiB and a few hundred ms off its start.
  if (!flags.includes(LAZY)) flags.unshift(LAZY);
  if (!flags.some((f) => f.startsWith("--v8-flags")) && !Deno.env.get("DENO_V8_FLAGS")) {
    flags.unshift(`--v8-flags=${SERVER_V8_FLAGS}`);
  }
  return [Deno.execPath(), "run", ...flags, Deno.mainModule];
}
