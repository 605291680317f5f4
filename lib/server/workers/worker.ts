/**
 * A worker process: serves the configs the primary sends over its standard input, on
 * listeners shared with the other workers (SO_REUSEPORT), and hands its log entries to the
 * primary, which writes them through its one pipeline. It has no admin endpoint, no config
 * tree and no autosave: the primary has them (see `primary.ts`).
 *
 * Each config goes through the steps of the primary's two-phase change (see `protocol.ts`):
 * provisioned on `prepare` while the running one serves, started on `commit` (its handlers
 * take over the listeners, the old config stays alive), and either kept (the old one is
 * stopped and released on `stop`/`cleanup`) or rolled back (`rollback`: the old one's
 * handlers serve again).
 *
 * Signals: SIGINT is ignored (a terminal sends it to the whole process group; the primary
 * stops the workers), SIGTERM stops this worker gracefully (the primary starts another),
 * SIGQUIT exits at once with 2 after releasing its storage locks. When the primary is gone
 * (its end of the pipe closed), the worker stops gracefully.
 *
 * @module
 */
import { ConfigContext } from "../context.ts";
import { ListenerPool } from "../listeners/pool.ts";
import { LogPipeline, makeLogger } from "../logging/pipeline.ts";
import { type LogEntry, parseLevel } from "../logging/entry.ts";
import type { BuiltLog } from "../logging/pipeline.ts";
import type { Logger } from "../module/instance.ts";
import { cleanUpOwnLocks } from "../module/storage.ts";
import { durationMs } from "../config/duration.ts";
import { WORKER_ENV } from "./count.ts";
import { errorResponse, routeMatches } from "../admin/handler.ts";
import { AdminError, toAdminError } from "../errors.ts";
import type { JsonObject } from "../config_tree.ts";
import {
  type Ask,
  type Calls,
  fromWireRequest,
  type FromWorker,
  PipeEnd,
  type PrimaryAnswer,
  PROTOCOL_VERSION,
  wireResponse,
} from "./protocol.ts";
import { useSharedScrape } from "../metrics/shared.ts";

/** Exit code of an immediate exit (SIGQUIT), as `run`'s. */
const FORCED = 2;

/**
 * A log pipeline that writes nothing itself: every entry one of the config's logs accepts
 * (level, include, exclude) goes to the primary, whose pipeline for the same config samples,
 * encodes and writes it.
 */
class ForwardingPipeline extends LogPipeline {
  constructor(logs: BuiltLog[], readonly send: (entry: LogEntry) => void) {
    super(logs);
  }
  override emit(entry: LogEntry): void {
    if (this.accepts(entry.logger, entry.level)) this.send(entry);
  }
  override flush(): Promise<void> {
    return Promise.resolve();
  }
}

const NOWHERE = { encode: () => new Uint8Array(), write() {} };

/**
 * The filters of a `logging` section (the primary decodes it strictly and fails the change
 * first when it is malformed; here only what decides which entries to hand over).
 */
function forwardingFilters(raw: unknown): BuiltLog[] {
  const logs: Record<string, unknown> = {
    ...((raw as { logs?: Record<string, unknown> } | null)?.logs ?? {}),
  };
  logs.default ??= {};
  return Object.entries(logs).map(([name, cfg]) => {
    const c = (cfg ?? {}) as { level?: unknown; include?: unknown; exclude?: unknown };
    return {
      name,
      level: parseLevel(c.level),
      include: Array.isArray(c.include) ? c.include as string[] : [],
      exclude: Array.isArray(c.exclude) ? c.exclude as string[] : [],
      encoder: NOWHERE,
      writer: NOWHERE,
    };
  });
}

/** The grace period of a config (`apps.http.grace_period`), in ms. */
function configGrace(config: JsonObject | null): number | undefined {
  const raw = (config as { apps?: { http?: { grace_period?: unknown } } } | null)?.apps?.http
    ?.grace_period;
  try {
    return raw === undefined || raw === null ? undefined : durationMs(raw);
  } catch {
    return undefined;
  }
}

/** One config this worker holds. */
interface Held {
  ctx: ConfigContext;
  config: JsonObject | null;
  /** The config that was current when this one was committed (what a rollback returns to). */
  previous?: number;
}

/**
 * Runs this process as worker `index` (1-based; 0: a spare, which learns its number when it
 * takes a dead worker's place) of the primary on the other end of standard input and output;
 * resolves to the exit code once it stopped.
 *
 * @example
 * ```ts ignore
 * Deno.exit(await runWorker(Number(Deno.env.get("GATEHOUSE_WORKER"))));
 * ```
 */
export async function runWorker(index: number): Promise<number> {
  const attributes = Deno.env.get("OTEL_RESOURCE_ATTRIBUTES");
  /** This process serves as worker `n`: its number in the environment, its OTLP resource. */
  const become = (n: number) => {
    index = n;
    Deno.env.set(WORKER_ENV, String(n));
    // each worker's OTLP metrics and traces are a resource of their own
    Deno.env.set(
      "OTEL_RESOURCE_ATTRIBUTES",
      [attributes, `gatehouse.worker=${n}`].filter(Boolean).join(","),
    );
    pool.shared!.unix = n === 1;
  };
  // the pipe is standard output: what would print there goes to standard error instead
  for (const k of ["log", "info", "debug"] as const) console[k] = console.error;
  const pipe = new PipeEnd<Ask | PrimaryAnswer, FromWorker>(
    Deno.stdin.readable,
    Deno.stdout.writable,
  );
  // the `metrics` handler answers every worker's registry summed: the primary collects it
  const asked = new Map<number, PromiseWithResolvers<string>>();
  let nextAsk = 1;
  useSharedScrape(() => {
    const id = nextAsk++;
    const answer = Promise.withResolvers<string>();
    asked.set(id, answer);
    pipe.send({ t: "ask", id, what: "metrics" });
    return answer.promise;
  });
  const pool = new ListenerPool();
  pool.shared = { ports: new Map(), unix: false };
  if (index > 0) become(index);
  const held = new Map<number, Held>();
  let current: number | undefined;
  const forward = (g: number | undefined, raw: unknown) =>
    new ForwardingPipeline(
      forwardingFilters(raw),
      (entry) => pipe.send({ t: "log", g, entry }, true),
    );
  const boot = forward(undefined, null);
  const log: Logger = makeLogger(
    "",
    () => (current !== undefined && held.get(current)?.ctx.logs) || boot,
  );
  pool.log = (msg, fields) => log.named("http.listeners").warn(msg, fields);

  let exiting: Promise<number> | undefined;
  const exited = Promise.withResolvers<number>();
  const shutdown = (graceMs?: number): Promise<number> => {
    if (exiting) return exiting;
    exiting = (async () => {
      let code = 0;
      graceMs ??= configGrace(current === undefined ? null : held.get(current)?.config ?? null);
      if (graceMs !== undefined) pool.gracePeriodMs = graceMs;
      const all = [...held.entries()].reverse();
      held.clear();
      current = undefined;
      for (const [, h] of all) {
        try {
          await h.ctx.stop();
        } catch (e) {
          code = 3;
          log.error("failed to stop apps", { error: e as Error });
        }
        try {
          await h.ctx.cleanup();
        } catch (e) {
          code = 3;
          log.error("cleanup failed", { error: e as Error });
        }
      }
      await pool.closeAll(graceMs);
      await cleanUpOwnLocks();
      return code;
    })();
    exiting.then(exited.resolve);
    return exiting;
  };

  const calls: { [K in keyof Calls]: (ask: Calls[K]["ask"]) => Promise<Calls[K]["answer"]> } = {
    async prepare({ g, worker, config, ports }) {
      if (worker !== index) become(worker);
      pool.shared!.ports = new Map(Object.entries(ports));
      const ctx = new ConfigContext(config, pool, {
        logs: (raw) => Promise.resolve(forward(g, raw)),
      });
      held.set(g, { ctx, config });
      try {
        await ctx.provision();
      } catch (e) {
        held.delete(g);
        await ctx.cleanup().catch(() => {});
        throw e;
      }
      return { routes: ctx.adminRoutes.map((r) => r.pattern), ports: pool.boundPorts() };
    },
    async commit({ g }) {
      const h = need(g);
      await h.ctx.start();
      h.previous = current;
      current = g;
      const addresses: Record<string, string[]> = {};
      for (const app of h.ctx.apps.values()) {
        const listening = (app as { listenAddresses?: () => Record<string, string[]> })
          .listenAddresses?.();
        if (listening) Object.assign(addresses, listening);
      }
      return { addresses };
    },
    async warm({ config }) {
      const ctx = new ConfigContext(config, pool, {
        validating: true,
        logs: () => Promise.resolve(new ForwardingPipeline([], () => {})),
      });
      try {
        await ctx.provision();
      } catch { /* the real prepare reports it */ }
      await ctx.cleanup().catch(() => {});
      return {};
    },
    async rollback({ g }) {
      const h = held.get(g);
      if (!h) return {};
      if (current === g) current = h.previous;
      await h.ctx.stop();
      return {};
    },
    async stop({ g }) {
      await held.get(g)?.ctx.stop();
      if (current === g) current = undefined;
      return {};
    },
    async cleanup({ g }) {
      const h = held.get(g);
      if (!h) return {};
      held.delete(g);
      if (current === g) current = undefined;
      await h.ctx.cleanup();
      return {};
    },
    async admin({ request }) {
      const req = fromWireRequest(request);
      const path = new URL(req.url).pathname;
      const routes = current === undefined ? [] : held.get(current)?.ctx.adminRoutes ?? [];
      const route = routes.filter((r) => routeMatches(r.pattern, path))
        .sort((a, b) => b.pattern.length - a.pattern.length)[0];
      let res: Response;
      try {
        if (!route) throw new AdminError("not_found", `no admin endpoint at ${path}`);
        res = await route.handle(req);
      } catch (e) {
        res = errorResponse(toAdminError(e));
      }
      return await wireResponse(res);
    },
    async shutdown({ graceMs }) {
      return { code: await shutdown(graceMs) };
    },
  };

  function need(g: number): Held {
    const h = held.get(g);
    if (!h) throw new Error(`config ${g} is not prepared on worker ${index}`);
    return h;
  }

  // control messages run one after the other, in the order sent; admin requests meanwhile
  let control: Promise<unknown> = Promise.resolve();
  const handle = (m: Ask | PrimaryAnswer) => {
    if (m.t === "answer") {
      const a = asked.get(m.id);
      asked.delete(m.id);
      if (m.ok) a?.resolve(m.value);
      else a?.reject(new Error(m.error));
      return;
    }
    const run = async () => {
      try {
        // deno-lint-ignore no-explicit-any
        const value = await (calls[m.t] as (a: any) => Promise<unknown>)(m);
        pipe.send({ t: "reply", id: m.id, ok: true, value });
      } catch (e) {
        pipe.send({ t: "reply", id: m.id, ok: false, error: (e as Error).message });
      }
    };
    if (m.t === "admin") void run();
    else control = control.then(run);
  };

  const signals: [Deno.Signal, () => void][] = [
    ["SIGINT", () => {}],
    ["SIGTERM", () => void shutdown()],
    ["SIGQUIT", () => {
      log.error("exiting immediately", { reason: "SIGQUIT", exit_code: FORCED });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<void>((r) => (timer = setTimeout(r, 2000)));
      Promise.race([cleanUpOwnLocks(), bound]).finally(() => {
        clearTimeout(timer);
        Deno.exit(FORCED);
      });
    }],
    ["SIGHUP", () => {}],
    ["SIGUSR2", () => {}],
  ];
  for (const [sig, fn] of signals) {
    try {
      Deno.addSignalListener(sig, fn);
    } catch { /* not on this platform */ }
  }

  pipe.send({ t: "hello", pid: Deno.pid, version: PROTOCOL_VERSION });
  const reading = pipe.read(handle, (text) =>
    log.warn("unreadable message from the primary", {
      text: text.slice(0, 200),
    }));
  // the primary closed the pipe (it exited, or was killed): stop gracefully
  void reading.then(() => shutdown());
  const code = await exited.promise;
  await control; // the answer to `shutdown`, when the primary asked for it
  if (pipe.dropped) {
    log.warn("log entries dropped: the primary did not keep up", { dropped: pipe.dropped });
  }
  await pipe.close();
  for (const [sig, fn] of signals) {
    try {
      Deno.removeSignalListener(sig, fn);
    } catch { /* gone */ }
  }
  return code;
}
