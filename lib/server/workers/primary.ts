/**
 * The primary process of a server with worker processes: the config runner of its engine
 * (which keeps the one config tree, the admin endpoint, autosave, `--watch` and `--resume`),
 * running every config on N worker processes (`gatehouse run` children, see `worker.ts`) that
 * share each listening address (SO_REUSEPORT). It serves no HTTP itself.
 *
 * A change is atomic across the workers, in two phases:
 *
 * 1. **prepare**: the first worker provisions the new config (its `:0` addresses get ports),
 *    then the others do with the same ports; the running config serves meanwhile. The primary
 *    builds the config's log pipeline (it writes every worker's log entries).
 * 2. **commit**, once every worker prepared: each starts the new config, whose handlers take
 *    the listeners over; the old config stays alive. When one fails, those that committed
 *    roll back (their old handlers serve again), every worker releases the new config and the
 *    change fails; the old config serves on, untouched.
 *
 * Only when every worker committed does the engine swap and stop the old config everywhere.
 * A worker that dies during a change fails the change. A worker that exits on its own is
 * started again at once with the running config (a worker that keeps dying right after its
 * start waits up to 10 s between attempts); changes and restarts take turns.
 *
 * @module
 */
import type { ConfigRunner, LoadingConfig } from "../engine.ts";
import { type AdminConfig, ConfigContext, decodeTopLevel } from "../context.ts";
import { ListenerPool } from "../listeners/pool.ts";
import { LogPipeline, makeLogger } from "../logging/pipeline.ts";
import "../logging/mod.ts"; // the encoders and writers its log pipeline may name
import type { LogEntry } from "../logging/entry.ts";
import type { AdminRoute } from "../module/mod.ts";
import type { Logger } from "../module/instance.ts";
import type { JsonObject } from "../config_tree.ts";
import { AdminError } from "../errors.ts";
import {
  type Ask,
  type Call,
  type Calls,
  fromBase64,
  fromWireResponse,
  type FromWorker,
  PipeEnd,
  type PrimaryAnswer,
  PROTOCOL_VERSION,
  wireRequest,
  type WireResponse,
} from "./protocol.ts";
import { mergeUpstreams, sumPrometheusText, type UpstreamRecord } from "./aggregate.ts";
import { WORKER_ENV } from "./count.ts";

/** A worker whose reply to a request never came: it exited. */
class WorkerGone extends Error {}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (e: Error) => void;
}

interface Member {
  index: number;
  pid: number;
  child: Deno.ChildProcess;
  pipe: PipeEnd<FromWorker, Ask | PrimaryAnswer>;
  /** Resolves on the worker's `hello`; rejects when it exits first. */
  hello: Promise<void>;
  /** Takes part in changes: it runs the current config. */
  joined: boolean;
  /** Configs it holds (prepared, running or being replaced). */
  gens: Set<number>;
  /** A spare: booted, and its modules loaded for the running config. */
  ready?: boolean;
  pending: Map<number, Pending>;
  gone?: string;
  started: number;
  exited: Promise<Deno.CommandStatus>;
}

/** How a worker pool is made. */
export interface WorkersOptions {
  /** Number of workers (2 or more). */
  count: number;
  /** The command line that starts a worker, without its arguments (see `workerCommand`). */
  command: string[];
  /**
   * Keep one spare worker booted (default false): a worker that dies is replaced by it at once
   * (it only provisions the running config) instead of by a process that boots first, for the
   * memory of one more process (a new worker serves within a few hundred ms without it).
   */
  spare?: boolean;
}

/** What `GET /workers` answers per worker. */
export interface WorkerInfo {
  /** The worker's number, 1 to N (`GATEHOUSE_WORKER` in its environment); 0 for the spare. */
  worker: number;
  pid: number;
  /** When this process started (RFC 3339). */
  started: string;
  /** How many times a worker with this number was started again. */
  restarts: number;
  /** It serves the running config (false while a new one starts up). */
  serving: boolean;
}

const text = (a: WireResponse) => new TextDecoder().decode(a.body ? fromBase64(a.body) : undefined);

/** A JSON array of every worker's answer, concatenated (each answer an array). */
const concatArrays = (answers: WireResponse[]) =>
  new Response(JSON.stringify(answers.flatMap((a) => JSON.parse(text(a)) as unknown[])), {
    headers: { "content-type": "application/json" },
  });

/**
 * Admin routes whose changes go to every worker (a cache purge empties every worker's cache),
 * with how the answers become one.
 */
const BROADCAST: Record<string, (answers: WireResponse[]) => Response> = {
  "/cache/": (answers) =>
    new Response(
      JSON.stringify({
        purged: answers.reduce(
          (n, a) => n + Number((JSON.parse(text(a)) as { purged?: number }).purged ?? 0),
          0,
        ),
      }),
      { headers: { "content-type": "application/json" } },
    ),
};

/** Admin routes answered by every worker and summed up. */
const AGGREGATED: Record<string, (answers: WireResponse[]) => Response> = {
  // the cache's stores and entries: every worker's
  "/cache/": concatArrays,
  "/metrics": (answers) =>
    new Response(sumPrometheusText(answers.map(text)), {
      headers: {
        "content-type": answers[0].headers.find(([k]) => k === "content-type")?.[1] ??
          "text/plain; version=0.0.4; charset=utf-8",
      },
    }),
  "/reverse_proxy/upstreams": (answers) =>
    new Response(
      // one line, as one process (and Caddy's JSON encoder) writes it
      JSON.stringify(mergeUpstreams(answers.map((a) => JSON.parse(text(a)) as UpstreamRecord[]))) +
        "\n",
      { headers: { "content-type": "application/json" } },
    ),
};

/**
 * The error of a change some workers failed: when every worker failed alike, the message as
 * one process would have said it; else each failure with its worker's number.
 */
function failure(errors: { index: number; error: string }[], of: number): Error {
  if (errors.length === of && new Set(errors.map((e) => e.error)).size === 1) {
    return new Error(errors[0].error);
  }
  return new Error(
    errors.sort((a, b) => a.index - b.index).map((e) => `worker ${e.index}: ${e.error}`).join("; "),
  );
}

/** The workers' restart pacing: at once, then 0.1 s, 0.2 s ... up to 10 s while they die young. */
const YOUNG_MS = 10_000;
const MAX_BACKOFF_MS = 10_000;

/**
 * The worker processes of a server and the config runner that drives them.
 *
 * @example
 * ```ts ignore
 * const workers = new Workers({ count: 2, command: workerCommand() as string[] });
 * const options: RunnerEngineOptions = { runner: workers };
 * const engine = new Engine(options);
 * workers.log = engine.log.named("workers");
 * await workers.start();
 * await engine.load(config);
 * ```
 */
export class Workers implements ConfigRunner {
  readonly count: number;
  readonly #command: string[];
  readonly #members: Member[] = [];
  /** Where the pool logs (the engine's logger, once the engine exists). */
  log: Logger;
  /** The primary's share of each config: its log pipeline (no listeners are ever opened). */
  readonly #localPool = new ListenerPool();
  readonly #boot = LogPipeline.boot();
  readonly #configs = new Map<number, ClusterConfig>();
  #current?: ClusterConfig;
  #turn: Promise<void> = Promise.resolve();
  #nextId = 1;
  #nextG = 1;
  #stopping = false;
  readonly #restarts = new Map<number, number>();
  readonly #young = new Map<number, number>();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #spareWanted: boolean;
  #spare?: Member;

  constructor(options: WorkersOptions) {
    this.count = options.count;
    this.#command = options.command;
    this.#spareWanted = options.spare ?? false;
    this.log = makeLogger("workers", () => this.#boot);
  }

  /**
   * Starts every worker; resolves once each is ready, throws when one exits first. The spare
   * (when wanted) starts then.
   */
  async start(): Promise<void> {
    for (let i = 1; i <= this.count; i++) this.#members[i - 1] = this.#spawn(i);
    await Promise.all(this.#members.map((m) => m.hello));
    for (const m of this.#members) m.joined = true;
    this.#spawnSpare();
  }

  /** The workers, for `GET /workers` (the spare, once ready to take a place, as worker 0). */
  info(): WorkerInfo[] {
    const spare = this.#spare?.ready && !this.#spare.gone ? [this.#spare] : [];
    return [...this.#members, ...spare].map((m) => ({
      worker: m.index,
      pid: m.pid,
      started: new Date(m.started).toISOString(),
      restarts: this.#restarts.get(m.index) ?? 0,
      serving: m.joined && !m.gone,
    }));
  }

  /** The listen addresses of the running config's servers, as the first worker bound them. */
  listenAddresses(): Record<string, string[]> {
    return this.#current?.addresses ?? {};
  }

  /** {@inheritDoc ConfigRunner.context} */
  context(config: JsonObject | null): LoadingConfig {
    return new ClusterConfig(this, config, this.#nextG++);
  }

  /** Waits for the turn of a change or a restart; resolves to the function that ends it. */
  async turn(): Promise<() => void> {
    const before = this.#turn;
    let end!: () => void;
    this.#turn = new Promise<void>((r) => (end = r));
    await before;
    return end;
  }

  /** @internal */
  get localPool(): ListenerPool {
    return this.#localPool;
  }

  /** @internal The workers running the current config. */
  joined(): Member[] {
    return this.#members.filter((m) => m.joined && !m.gone);
  }

  /** @internal */
  holding(g: number): Member[] {
    return this.#members.filter((m) => m.gens.has(g) && !m.gone);
  }

  /** @internal */
  configs(): Map<number, ClusterConfig> {
    return this.#configs;
  }

  /** @internal The config every worker committed. */
  set current(c: ClusterConfig | undefined) {
    this.#current = c;
  }

  get current(): ClusterConfig | undefined {
    return this.#current;
  }

  /** @internal Sends a request to a worker; rejects when it fails there or the worker exits. */
  call<K extends Call>(m: Member, t: K, ask: Calls[K]["ask"]): Promise<Calls[K]["answer"]> {
    if (m.gone) return Promise.reject(new WorkerGone(m.gone));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      m.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      m.pipe.send({ t, id, ...ask } as Ask);
    });
  }

  #spawn(index: number): Member {
    const child = new Deno.Command(this.#command[0], {
      args: [...this.#command.slice(1), "run", "--worker", String(index)],
      env: { [WORKER_ENV]: String(index) },
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const hello = Promise.withResolvers<void>();
    const m: Member = {
      index,
      pid: child.pid,
      child,
      pipe: new PipeEnd(child.stdout, child.stdin),
      hello: hello.promise,
      joined: false,
      gens: new Set(),
      pending: new Map(),
      started: Date.now(),
      exited: child.status,
    };
    hello.promise.catch(() => {});
    void m.pipe.read((msg) => {
      if (msg.t === "hello") {
        if (msg.version !== PROTOCOL_VERSION) {
          hello.reject(new Error(`worker ${m.index} speaks version ${msg.version} of the pipe`));
          child.kill("SIGKILL");
        } else hello.resolve();
      } else if (msg.t === "reply") {
        const p = m.pending.get(msg.id);
        m.pending.delete(msg.id);
        if (msg.ok) p?.resolve(msg.value);
        else p?.reject(new Error(msg.error));
      } else if (msg.t === "log") this.#emit(msg.g, msg.entry);
      else if (msg.t === "ask") {
        this.#sum("/metrics").then(
          (value) => m.pipe.send({ t: "answer", id: msg.id, ok: true, value }),
          (e) => m.pipe.send({ t: "answer", id: msg.id, ok: false, error: (e as Error).message }),
        );
      }
    }, (text) => this.log.warn("worker output", { worker: m.index, text: text.slice(0, 2000) }));
    m.exited = child.status.then((status) => {
      const how = status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
      m.gone = `worker ${m.index} (pid ${m.pid}) exited (${how})`;
      hello.reject(new WorkerGone(m.gone));
      for (const p of m.pending.values()) p.reject(new WorkerGone(m.gone));
      m.pending.clear();
      this.#exited(m, status);
      return status;
    });
    this.log.debug(index ? "worker started" : "spare worker started", {
      worker: index,
      pid: m.pid,
    });
    return m;
  }

  #emit(g: number | undefined, entry: LogEntry): void {
    const logs = (g !== undefined ? this.#configs.get(g)?.logs : undefined) ??
      this.#current?.logs ?? this.#boot;
    logs.emit(entry);
  }

  /** The delay before starting process `slot` again (0: the spare): none the first time. */
  #backoff(slot: number, started: number): number {
    const young = Date.now() - started < YOUNG_MS;
    const tries = young ? (this.#young.get(slot) ?? 0) + 1 : 0;
    this.#young.set(slot, tries);
    return tries <= 1 ? 0 : Math.min(MAX_BACKOFF_MS, 100 * 2 ** (tries - 2));
  }

  #later(delay: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#stopping) fn();
    }, delay);
    this.#timers.add(timer);
  }

  /**
   * Starts a spare (when wanted and none is there); once booted it validates the running
   * config, which loads the modules it will need.
   */
  #spawnSpare(): void {
    if (!this.#spareWanted || this.#stopping || this.#spare) return;
    const spare = this.#spare = this.#spawn(0);
    spare.hello.then(async () => {
      if (this.#current && this.#spare === spare) {
        await this.call(spare, "warm", { config: this.#current.config });
      }
      spare.ready = true;
      this.log.debug("spare worker ready", { pid: spare.pid });
    }).catch(() => {});
  }

  #exited(m: Member, status: Deno.CommandStatus): void {
    if (this.#stopping) return;
    const fields = {
      pid: m.pid,
      exit_code: status.code,
      ...(status.signal ? { signal: status.signal } : {}),
    };
    if (m === this.#spare) {
      this.#spare = undefined;
      const delay = this.#backoff(0, m.started);
      this.log.warn("spare worker exited; starting another", { ...fields, delay: delay / 1000 });
      this.#later(delay, () => this.#spawnSpare());
      return;
    }
    if (this.#members[m.index - 1] !== m) return;
    const spare = this.#spare;
    if (spare) {
      // the spare booted already: it takes the place at once, and another spare boots
      this.#spare = undefined;
      this.log.error("worker exited unexpectedly; the spare takes its place", {
        worker: m.index,
        ...fields,
        spare: spare.pid,
      });
      void this.#join(m.index, spare);
      this.#spawnSpare();
      return;
    }
    const delay = this.#backoff(m.index, m.started);
    this.log.error("worker exited unexpectedly; starting another", {
      worker: m.index,
      ...fields,
      ...(delay ? { delay: delay / 1000 } : {}),
    });
    this.#later(delay, () => void this.#join(m.index, this.#spawn(m.index)));
  }

  /** Makes `m` worker `index` (a new process, or the spare) and has it run the current config. */
  async #join(index: number, m: Member): Promise<void> {
    m.index = index;
    this.#members[index - 1] = m;
    this.#restarts.set(index, (this.#restarts.get(index) ?? 0) + 1);
    try {
      await m.hello;
    } catch {
      return; // it exited already: #exited starts another
    }
    const end = await this.turn();
    try {
      const c = this.#current;
      if (c && !m.gone) {
        // one worker alone: no need to wait for the prepare before asking for the commit
        const ask = { g: c.g, worker: index, config: c.config, ports: c.ports };
        const prepared = this.call(m, "prepare", ask);
        const committed = this.call(m, "commit", { g: c.g });
        committed.catch(() => {});
        await prepared;
        m.gens.add(c.g);
        await committed;
      }
      m.joined = true;
      this.log.info("worker serving", { worker: index, pid: m.pid });
    } catch (e) {
      if (!m.gone) {
        this.log.error("worker cannot run the current config", {
          worker: index,
          pid: m.pid,
          error: (e as Error).message,
        });
        m.child.kill("SIGKILL");
      }
    } finally {
      end();
    }
  }

  /**
   * Shuts every worker down (after the engine stopped the last config), each waiting at most
   * `graceMs` for its requests in flight; resolves to 3 when one failed to clean up.
   */
  async close(graceMs?: number): Promise<number> {
    this.#stopping = true;
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    const all = this.#spare ? [...this.#members, this.#spare] : this.#members;
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (graceMs !== undefined) {
      // a worker past its grace period (and 5 s to exit) is killed
      timer = setTimeout(() => {
        for (const m of all) if (!m.gone) m.child.kill("SIGKILL");
      }, graceMs + 5000);
    }
    const codes = await Promise.all(all.map(async (m) => {
      let code = 0;
      let answered = false;
      try {
        code = (await this.call(m, "shutdown", { graceMs })).code;
        answered = true;
      } catch { /* it exited first, or was killed past its grace period */ }
      const status = await m.exited;
      return answered ? code : status.success ? 0 : 3;
    }));
    clearTimeout(timer);
    for (const m of all) await m.pipe.close();
    return codes.some((c) => c !== 0) ? 3 : 0;
  }

  /** Immediate exit: every worker gets SIGQUIT (releases its locks, exits 2); killed after 2 s. */
  async exitNow(): Promise<void> {
    this.#stopping = true;
    for (const t of this.#timers) clearTimeout(t);
    const all = this.#spare ? [...this.#members, this.#spare] : this.#members;
    for (const m of all) {
      try {
        if (!m.gone) m.child.kill("SIGQUIT");
      } catch { /* gone */ }
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(all.map((m) => m.exited)),
      new Promise((r) => (timer = setTimeout(r, 2000))),
    ]);
    clearTimeout(timer);
    for (const m of all) {
      try {
        if (!m.gone) m.child.kill("SIGKILL");
      } catch { /* gone */ }
    }
  }

  /** The text of a GET of `path` on every worker's admin routes, summed (`/metrics`). */
  async #sum(path: string): Promise<string> {
    const res = await this.forward(path, new Request(`http://primary${path}`));
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return await res.text();
  }

  /**
   * After `POST /tls/revoke` answered (one worker revoked the certificate and stored its
   * replacement): reloads the running config on every worker, which loads the replacement
   * from the storage (set by the program that made the engine).
   */
  reload?: () => Promise<unknown>;

  /** Answers an admin route of the workers' modules (one worker's, or every worker's summed). */
  async forward(pattern: string, req: Request): Promise<Response> {
    const request = await wireRequest(req);
    const members = this.joined();
    if (!members.length) throw new AdminError("internal", "no worker process is running");
    const reads = req.method === "GET" || req.method === "HEAD";
    const merge = reads ? AGGREGATED[pattern] : BROADCAST[pattern];
    if (!merge) {
      const answer = await this.call(members[0], "admin", { request });
      if (pattern === "/tls/revoke" && answer.status === 200 && this.reload) {
        try {
          await this.reload();
        } catch (e) {
          this.log.error("reloading the workers after a revocation", { error: e as Error });
        }
      }
      return fromWireResponse(answer);
    }
    const answers = await Promise.all(members.map((m) => this.call(m, "admin", { request })));
    const refused = answers.find((a) => a.status !== 200);
    return refused ? fromWireResponse(refused) : merge(answers);
  }
}

/** One config on every worker: the engine's {@linkcode LoadingConfig} with workers. */
class ClusterConfig implements LoadingConfig {
  readonly admin: AdminConfig;
  logs!: LogPipeline;
  adminRoutes: AdminRoute[] = [];
  /** The ports of its `:0` addresses (what a restarted worker binds). */
  ports: Record<string, number> = {};
  /** The listen addresses of its servers (the first worker's). */
  addresses: Record<string, string[]> = {};
  readonly #local: ConfigContext;
  #end?: () => void;
  #prepared: Member[] = [];

  constructor(
    readonly workers: Workers,
    readonly config: JsonObject | null,
    readonly g: number,
  ) {
    this.admin = decodeTopLevel(config ?? {});
    const logging = config?.logging;
    this.#local = new ConfigContext(logging === undefined ? {} : { logging }, workers.localPool, {
      logsOnly: true,
    });
  }

  async provision(): Promise<void> {
    this.#end = await this.workers.turn();
    await this.#local.provision();
    this.logs = this.#local.logs;
    this.workers.configs().set(this.g, this);
    const [pilot, ...rest] = this.workers.joined();
    if (!pilot) throw new Error("no worker process is running");
    const ask = { g: this.g, config: this.config };
    const first = await this.#prepare(pilot, { ...ask, ports: this.workers.current?.ports ?? {} });
    this.ports = first.ports;
    this.adminRoutes = [
      ...first.routes.map((pattern) => ({
        pattern,
        handle: (req: Request) => this.workers.forward(pattern, req),
      })),
      {
        pattern: "/workers",
        handle: (req: Request) => {
          if (req.method !== "GET") {
            throw new AdminError("method_not_allowed", `method ${req.method} not allowed`);
          }
          return new Response(JSON.stringify(this.workers.info()), {
            headers: { "content-type": "application/json" },
          });
        },
      },
    ];
    const errors: { index: number; error: string }[] = [];
    await Promise.all(
      rest.map((m) =>
        this.#prepare(m, { ...ask, ports: first.ports }).catch((e) =>
          errors.push({ index: m.index, error: (e as Error).message })
        )
      ),
    );
    if (errors.length) throw failure(errors, rest.length + 1);
  }

  async #prepare(
    m: Member,
    ask: Omit<Calls["prepare"]["ask"], "worker">,
  ): Promise<Calls["prepare"]["answer"]> {
    const answer = await this.workers.call(m, "prepare", { ...ask, worker: m.index });
    m.gens.add(this.g);
    this.#prepared.push(m);
    return answer;
  }

  async start(): Promise<void> {
    const errors: { index: number; error: string }[] = [];
    const committed: Member[] = [];
    await Promise.all(this.#prepared.map(async (m, i) => {
      try {
        const r = await this.workers.call(m, "commit", { g: this.g });
        committed.push(m);
        if (i === 0) this.addresses = r.addresses;
      } catch (e) {
        errors.push({ index: m.index, error: (e as Error).message });
      }
    }));
    if (errors.length) {
      // the old config is alive on every worker: those that switched switch back
      await Promise.all(committed.map((m) =>
        this.workers.call(m, "rollback", { g: this.g })
          .catch(() => {})
      ));
      throw failure(errors, this.#prepared.length);
    }
    this.workers.current = this;
    this.#end?.();
    this.#end = undefined;
  }

  async stop(): Promise<void> {
    const errors: { index: number; error: string }[] = [];
    await Promise.all(
      this.workers.holding(this.g).map((m) =>
        this.workers.call(m, "stop", { g: this.g }).catch((e) => {
          if (!(e instanceof WorkerGone)) {
            errors.push({ index: m.index, error: (e as Error).message });
          }
        })
      ),
    );
    await this.#local.stop();
    if (errors.length) throw failure(errors, 0);
  }

  async cleanup(): Promise<void> {
    const errors: { index: number; error: string }[] = [];
    try {
      await Promise.all(
        this.workers.holding(this.g).map((m) =>
          this.workers.call(m, "cleanup", { g: this.g }).then(
            () => m.gens.delete(this.g),
            (e) => {
              m.gens.delete(this.g);
              if (!(e instanceof WorkerGone)) {
                errors.push({ index: m.index, error: (e as Error).message });
              }
            },
          )
        ),
      );
      if (this.workers.current === this) this.workers.current = undefined;
      this.workers.configs().delete(this.g);
      await this.#local.cleanup();
    } finally {
      this.#end?.();
      this.#end = undefined;
    }
    if (errors.length) throw failure(errors, 0);
  }
}
