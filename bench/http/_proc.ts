/**
 * Server processes of the load scenarios: started pinned to a core with `taskset`, their output
 * kept in a log file, their CPU time and peak resident set read from `/proc`, and when one
 * is gone, how it ended (exit code or signal, the end of its output, the kernel's lines about
 * it) — a server that vanishes during a run is a finding, never silently a missing row.
 *
 * @module
 */

const TICK = 100; // USER_HZ

/** A free loopback TCP port. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const p = (l.addr as Deno.NetAddr).port;
  l.close();
  return p;
}

/** True when `cmd` is on the PATH. */
export function has(cmd: string): boolean {
  try {
    return new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`], stdout: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** utime + stime of a process, in seconds (0 when it is gone). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return 0;
  }
}

/** A line of `/proc/<pid>/status` in KiB (VmHWM, VmRSS), 0 when gone. */
export function statusKiB(pid: number, field: string): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(
      Deno.readTextFileSync(`/proc/${pid}/status`),
    );
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** A process and its descendants (workers; nginx's workers), recursively. */
export function processTree(pid: number): number[] {
  return [pid, ...children(pid).flatMap(processTree)];
}

/** The memory of a set of processes, in KiB (processes already gone count nothing). */
export interface Memory {
  /** Processes that were measured. */
  processes: number;
  /** The sum of their resident sets (VmRSS): a page mapped by n of them counts n times. */
  rss: number;
  /**
   * The sum of their proportional sets (PSS, `smaps_rollup`): each page divided between the
   * processes (of the whole machine) that map it.
   */
  pss: number;
  /**
   * The physical pages resident in any of them, each counted once (distinct page frame
   * numbers of the present pages in `/proc/<pid>/pagemap`): the memory the machine spends on
   * them. Undefined where the kernel hides page frame numbers (they need CAP_SYS_ADMIN).
   */
  union?: number;
  /** Of `union`: pages resident in more than one of the processes (the binary's, mostly). */
  shared?: number;
}

const PAGE_KIB = 4;
const PM_CHUNK = 1 << 20; // bytes of pagemap read at once: 128 Ki pages (512 MiB of addresses)

/**
 * The distinct page frame numbers of `pid`'s present pages, added to `owners` (frame ->
 * the index of the first process seen with it, or -1 once a second process maps it).
 * False when the kernel hides the frame numbers (it reports 0 for present pages then).
 */
function addFrames(pid: number, index: number, owners: Map<number, number>): boolean {
  // only mappings with resident pages (smaps' Rss), which leaves out V8's reservations
  const ranges: [number, number][] = [];
  let range: [number, number] | undefined;
  for (const line of Deno.readTextFileSync(`/proc/${pid}/smaps`).split("\n")) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (head) range = [parseInt(head[1], 16), parseInt(head[2], 16)];
    else if (range && line.startsWith("Rss:")) {
      if (!/^Rss:\s+0 kB/.test(line) && range[0] < 2 ** 47) ranges.push(range);
      range = undefined;
    }
  }
  const file = Deno.openSync(`/proc/${pid}/pagemap`);
  try {
    const buf = new Uint8Array(PM_CHUNK);
    const view = new DataView(buf.buffer);
    for (const [start, end] of ranges) {
      for (let page = start / 4096; page < end / 4096;) {
        const want = Math.min(PM_CHUNK, (end / 4096 - page) * 8);
        file.seekSync(page * 8, Deno.SeekMode.Start);
        let got = 0;
        while (got < want) {
          const n = file.readSync(buf.subarray(got, want));
          if (!n) break;
          got += n;
        }
        for (let o = 0; o + 8 <= got; o += 8) {
          const high = view.getUint32(o + 4, true);
          if (!(high & 0x80000000)) continue; // not present (bit 63)
          const frame = view.getUint32(o, true) + (high & 0x7fffff) * 2 ** 32; // bits 0-54
          if (frame === 0) return false;
          const first = owners.get(frame);
          if (first === undefined) owners.set(frame, index);
          else if (first !== index && first !== -1) owners.set(frame, -1);
        }
        if (got < want) break; // the mapping went away meanwhile
        page += want / 8;
      }
    }
  } finally {
    file.close();
  }
  return true;
}

/**
 * The memory of the processes `pids` by three measures: the sum of their RSS, the sum of
 * their PSS, and the union of their resident pages (each physical page once).
 */
export function memoryOf(pids: number[]): Memory {
  let rss = 0, pss = 0, processes = 0;
  const owners = new Map<number, number>();
  let frames = true;
  for (const [i, pid] of pids.entries()) {
    try {
      const r = statusKiB(pid, "VmRSS");
      const p = Number(
        /^Pss:\s+(\d+) kB/m.exec(Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`))?.[1] ?? 0,
      );
      if (frames) frames = addFrames(pid, i, owners);
      rss += r;
      pss += p;
      processes++;
    } catch { /* gone */ }
  }
  if (!frames) return { processes, rss, pss };
  let shared = 0;
  for (const owner of owners.values()) if (owner === -1) shared++;
  return { processes, rss, pss, union: owners.size * PAGE_KIB, shared: shared * PAGE_KIB };
}

function children(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Waits until something accepts TCP connections on `port`. */
export async function waitUp(port: number, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`port ${port} never opened`);
}

/** A started server. */
export interface Server {
  /** Row name. */
  name: string;
  /** Its port. */
  port: number;
  /** The `taskset` child (which execs the server: same pid). */
  child: Deno.ChildProcess;
  /** Its pid and its children's (nginx workers). */
  pids(): number[];
  /** Where its stdout and stderr go. */
  log: string;
  /** Set once the process ended: code and signal. */
  ended?: Deno.CommandStatus;
}

/** Starts `cmd` pinned to `core`, stdout and stderr appended to `<dir>/<file>.log`. */
export async function start(
  o: {
    name: string;
    cmd: string[];
    port: number;
    core: string;
    dir: string;
    env?: Record<string, string>;
  },
): Promise<Server> {
  const log = `${o.dir}/${o.name.replace(/[^a-z0-9]+/gi, "-")}.log`;
  const file = await Deno.open(log, { create: true, append: true });
  const child = new Deno.Command("taskset", {
    args: ["-c", o.core, ...o.cmd],
    stdout: "piped",
    stderr: "piped",
    env: o.env,
  }).spawn();
  const s: Server = {
    name: o.name,
    port: o.port,
    child,
    log,
    pids: () => [child.pid, ...children(child.pid)],
  };
  const sink = (r: ReadableStream<Uint8Array>) =>
    r.pipeTo(
      new WritableStream({ write: (chunk) => file.write(chunk).then(() => {}) }),
    ).catch(() => {});
  void Promise.all([sink(child.stdout), sink(child.stderr)]).finally(() => file.close());
  child.status.then((st) => (s.ended = st));
  return s;
}

/** Kernel log lines about `pid` (traps, OOM kills), when `dmesg` can be read. */
function kernelLines(pid: number): string[] {
  try {
    const out = new Deno.Command("dmesg", { stdout: "piped", stderr: "null" }).outputSync();
    return new TextDecoder().decode(out.stdout).split("\n")
      .filter((l) =>
        l.includes(`[${pid}]`) || new RegExp(`\\b${pid}\\b.*(oom|Killed)`, "i").test(l)
      );
  } catch {
    return [];
  }
}

/**
 * Null while `s` runs; once it is gone, how it ended: exit code or signal, the last lines of
 * its output and what the kernel logged about it.
 */
export async function gone(s: Server): Promise<string | null> {
  try {
    Deno.statSync(`/proc/${s.child.pid}`);
    const state = /State:\s+(\S)/.exec(Deno.readTextFileSync(`/proc/${s.child.pid}/status`));
    if (state?.[1] !== "Z") return null;
  } catch { /* gone */ }
  const st = s.ended ?? await s.child.status;
  await new Promise((r) => setTimeout(r, 100)); // the last output reaches the log
  const tail = (await Deno.readTextFile(s.log).catch(() => "")).split("\n").slice(-40).join("\n");
  return [
    `${s.name} (pid ${s.child.pid}) ended: ${
      st.signal ? `signal ${st.signal}` : `exit code ${st.code}`
    }`,
    ...kernelLines(s.child.pid).map((l) => `kernel: ${l}`),
    `its output (last lines of ${s.log}):`,
    tail,
  ].join("\n");
}

/** One measurement of a server in a scenario. */
export interface Result {
  rps: number;
  p99ms: number;
  cpuUs: number;
  errors: number;
}

/** A scenario of a bench: what runs against one server for `seconds`. */
export interface Scenario {
  name: string;
  run(s: Server, seconds: number): Promise<Result>;
  /** Servers the scenario leaves out. */
  skips?(s: Server): boolean;
}

/** The system's load average now (1, 5 and 15 minutes). */
export function loadAverage(): string {
  return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
}

/**
 * Runs every scenario `rounds` times on every server, the servers' order alternating by round,
 * after a discarded 2 s warm-up in the first; records each result under `scenario|server` in
 * `results` and the load average after each scenario in `loads`, prints each round, and throws
 * when a server ended during the run.
 */
export async function runRounds(
  scenarios: Scenario[],
  servers: Server[],
  o: { rounds: number; duration: number; results: Map<string, Result[]>; loads: string[] },
): Promise<void> {
  for (const sc of scenarios) {
    for (let round = 0; round < o.rounds; round++) {
      for (const s of round % 2 ? [...servers].reverse() : servers) {
        if (sc.skips?.(s)) continue;
        if (round === 0) await sc.run(s, 2); // warm-up, discarded
        const r = await sc.run(s, o.duration);
        const ended = await gone(s);
        if (ended) throw new Error(`${s.name} ended during the run:\n${ended}`);
        const k = `${sc.name}|${s.name}`;
        (o.results.get(k) ?? o.results.set(k, []).get(k)!).push(r);
        console.error(
          `${sc.name} ${s.name} round ${round + 1}: ${r.rps.toFixed(0)}/s p99 ${
            r.p99ms.toFixed(2)
          } ms cpu ${r.cpuUs.toFixed(1)} µs errors ${r.errors}`,
        );
      }
    }
    o.loads.push(`after ${sc.name} ${loadAverage()}`);
  }
}

/** Stops every server (SIGTERM) and returns each one's peak RSS in KiB (VmHWM of its processes). */
export async function stopServers(servers: Server[]): Promise<Map<string, number>> {
  const peak = new Map(
    servers.map((s) => [s.name, s.pids().reduce((n, p) => n + statusKiB(p, "VmHWM"), 0)]),
  );
  for (const s of servers) {
    try {
      s.child.kill("SIGTERM");
    } catch { /* gone */ }
    await s.child.status;
  }
  return peak;
}

/** The median of `xs` (the upper one of an even count). */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}
