/**
 * The config engine: holds the config tree, serialises changes, loads each new config
 * transactionally (provision → validate → open listeners → start → swap; on failure the new
 * one is cleaned up and the old keeps serving), runs the admin endpoint, autosaves.
 *
 * @module
 */
import {
  accessTree,
  canonicalJson,
  checkJsonNumbers,
  CONFIG_KEY,
  copyAlongPath,
  decodeBody,
  encodeForGet,
  fnv1a32,
  indexIds,
  type Json,
  type JsonObject,
  makeEtag,
  parseIfMatch,
  stripMeta,
  type TreeMethod,
} from "./config_tree.ts";
import { AdminError } from "./errors.ts";
import { type AdminConfig, ConfigContext } from "./context.ts";
import { ListenerPool } from "./listeners/pool.ts";
import { LogPipeline, makeLogger } from "./logging/pipeline.ts";
import { durationMs } from "./config/duration.ts";
import type { AdminRoute } from "./module/mod.ts";
import type { ConnHandler, ListenerHandle } from "./module/listener.ts";
import type { Logger } from "./module/instance.ts";
import { parseNetworkAddress } from "./net/address.ts";
import { adminSecurity } from "./admin/security.ts";
import { type ChangeOptions, type ConfigAuthority, createAdminHandler } from "./admin/handler.ts";
import { writeFileAtomic } from "./storage/file_system.ts";
import type { ResolveOptions } from "./net/resolve_host.ts";

/** The admin address used when neither the config nor `GATEHOUSE_ADMIN` gives one. */
export const DEFAULT_ADMIN_ADDRESS = "localhost:2019";

/** Options of an engine. */
export interface EngineOptions {
  /** Admin address when the config has no `admin.listen`; `false` = no admin endpoint by default. */
  defaultAdmin?: string | false;
  /** Autosave file; `false` or absent = never autosave. */
  autosavePath?: string | false;
  /** Called after `POST /stop` was answered. Default: `engine.shutdown()`. */
  onStopRequest?: () => void;
  /** Largest admin request body in bytes (default 100 MiB). */
  maxBodyBytes?: number;
  /** Grace period for in-flight requests when sockets close (ms; default: no limit). */
  gracePeriodMs?: number;
  /**
   * How listen host names are resolved before binding (default: the system's resolvers, 5 s
   * limit). The lookup never holds the event loop: other sites and the admin API keep answering.
   */
  resolve?: ResolveOptions;
}

/**
 * The engine's options with the runner seam the command line uses (not part of the embedding
 * API): what runs the configs, by default this process (a {@linkcode ConfigContext} per
 * config, listeners in {@linkcode Engine.pool}); worker processes with `lib/server/workers/`.
 * Pass it as a variable of this type (`new Engine(options)`).
 */
export interface RunnerEngineOptions extends EngineOptions {
  /** What runs the configs. */
  runner?: ConfigRunner;
}

const RUNNERS = new WeakMap<Engine, ConfigRunner>();

/** What runs an engine's configs (this process, or worker processes). */
export function runnerOf(engine: Engine): ConfigRunner {
  return RUNNERS.get(engine)!;
}

/**
 * One config as the engine loads it: provisioned (everything that can fail, the old config
 * still serving), started, and later stopped and cleaned up. A {@linkcode ConfigContext} in
 * this process, or the same steps on every worker process.
 */
export interface LoadingConfig {
  /** The decoded `admin` section. */
  readonly admin: AdminConfig;
  /** The config's log pipeline (where the engine's own messages go once it is swapped in). */
  readonly logs: LogPipeline;
  /** The admin routes its modules registered. */
  readonly adminRoutes: readonly AdminRoute[];
  /** Provisions and validates; throws on failure (then `cleanup` releases what it took). */
  provision(): Promise<void>;
  /** Starts the apps; throws on failure, the apps it started stopped again. */
  start(): Promise<void>;
  /** Stops the apps (the config is being replaced or the process stops). */
  stop(): Promise<void>;
  /** Releases everything it acquired (idempotent). */
  cleanup(): Promise<void>;
}

/** What runs the configs an engine loads. */
export interface ConfigRunner {
  /** A config to load; decodes its top level (throws on a bad `admin` section). */
  context(config: JsonObject | null): LoadingConfig;
  /**
   * At shutdown, once the last config stopped: closes what served it, waiting at most
   * `graceMs` (when given) for requests in flight; resolves to an exit code (3 when some
   * cleanup failed) or nothing.
   */
  close(graceMs?: number): Promise<number | void>;
  /** An immediate exit (SIGQUIT, a second SIGINT): ends what runs at once, its locks released. */
  exitNow?(): Promise<void>;
}

interface AdminState {
  listen: string;
  handle: ListenerHandle;
  address: string;
}

/**
 * The running server's core.
 *
 * @example
 * ```ts
 * import { Engine } from "./engine.ts";
 * const engine = new Engine({ defaultAdmin: "127.0.0.1:0" });
 * await engine.load({});
 * console.log(engine.adminAddress);
 * await engine.shutdown();
 * ```
 */
export class Engine implements ConfigAuthority {
  /** Listeners of the apps (reference-counted across configs). */
  readonly pool: ListenerPool = new ListenerPool();
  readonly #adminPool = new ListenerPool();
  /** The options the engine was made with. */
  readonly options: EngineOptions;
  #root: JsonObject = { [CONFIG_KEY]: null };
  #rawJson = "null";
  #ids = new Map<string, string>();
  #ctx?: LoadingConfig;
  readonly #runner: ConfigRunner;
  #admin?: AdminState;
  #logs: LogPipeline = LogPipeline.boot();
  #queue: Promise<unknown> = Promise.resolve();
  #background = new Set<Promise<unknown>>();
  #stopped = false;
  /** Logger of the core (`admin`, `admin.api`, ...); follows the current logging config. */
  readonly log: Logger = makeLogger("", () => this.#logs);

  /** Creates an engine with no config loaded (call `load`). */
  constructor(options: EngineOptions = {}) {
    this.options = options;
    this.pool.gracePeriodMs = options.gracePeriodMs;
    this.pool.log = (msg, fields) => this.log.named("http.listeners").warn(msg, fields);
    this.#adminPool.gracePeriodMs = options.gracePeriodMs;
    if (options.resolve) this.pool.resolve = this.#adminPool.resolve = options.resolve;
    this.#runner = (options as RunnerEngineOptions).runner ?? {
      context: (config) => new ConfigContext(config, this.pool),
      close: (graceMs) => this.pool.closeAll(graceMs),
    };
    RUNNERS.set(this, this.#runner);
  }

  /** The running config (with `@id` fields), or null. */
  get config(): Json {
    return JSON.parse(JSON.stringify(this.#root[CONFIG_KEY]));
  }

  /** The bound admin address (`host:port`, `unix/path`), or undefined when disabled. */
  get adminAddress(): string | undefined {
    return this.#admin?.address;
  }

  /** Admin routes registered by the modules of the running config. */
  get moduleRoutes(): readonly AdminRoute[] {
    return this.#ctx?.adminRoutes ?? [];
  }

  /** Reads the tree at `path` (`/config/...`): the GET body and its Etag. */
  read(path: string): { body: string; etag: string } {
    const value = accessTree(this.#root, "GET", path);
    return { body: encodeForGet(value), etag: makeEtag(path, value) };
  }

  /** Resolves `/id/<id>/<rest>` to `/config/...`; throws 404 for an unknown id. */
  resolveId(id: string): string {
    const path = this.#ids.get(id);
    if (!path) throw new AdminError("not_found", `unknown object ID '${id}'`);
    return path;
  }

  /** Runs `fn` after every earlier change finished (changes are serialised). */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(fn, fn);
    this.#queue = next.catch(() => {});
    return next;
  }

  /**
   * Changes the tree at a path (or at the path a resolver returns when the change's turn
   * comes, for `/id/` requests) and loads the result. `body` is the raw JSON text (ignored for
   * DELETE). Throws an AdminError (412 stale If-Match, 404, 409, 400 load failure ...).
   * Resolves to false when the result equals the running config and `force` is not set.
   */
  change(
    method: TreeMethod,
    pathOrResolver: string | (() => string),
    body: string,
    { ifMatch, force = false }: ChangeOptions = {},
  ): Promise<boolean> {
    return this.#serial(async () => {
      if (this.#stopped) throw new AdminError("bad_request", "server is stopping");
      if (method === "GET") throw new AdminError("method_not_allowed", "method not allowed");
      if (ifMatch) {
        const want = parseIfMatch(ifMatch);
        const have = fnv1a32(encodeForGet(accessTree(this.#root, "GET", want.path)));
        if (have !== want.hash) {
          throw new AdminError(
            "precondition_failed",
            "If-Match header did not match current config hash",
          );
        }
      }
      const path = typeof pathOrResolver === "string" ? pathOrResolver : pathOrResolver();
      const value = method === "DELETE" ? null : decodeBody(body);
      const next = copyAlongPath(this.#root, path);
      accessTree(next, method, path, value);
      return await this.#apply(next[CONFIG_KEY], force);
    });
  }

  /** Replaces the whole config (POST /load). Resolves false when unchanged and not forced. */
  load(config: unknown, force = false): Promise<boolean> {
    return this.#serial(async () => {
      if (this.#stopped) throw new AdminError("bad_request", "server is stopping");
      checkJsonNumbers(config, "decoding config"); // a copy through JSON would make them null
      return await this.#apply(JSON.parse(JSON.stringify(config ?? null)) as Json, force);
    });
  }

  async #apply(config: Json, force: boolean): Promise<boolean> {
    if (config !== null && (typeof config !== "object" || Array.isArray(config))) {
      throw new AdminError("bad_request", "config must be a JSON object");
    }
    const json = canonicalJson(config);
    if (!force && json === this.#rawJson && this.#ctx) {
      this.log.named("admin").info("config is unchanged");
      return false;
    }
    const ids = indexIds(config);
    try {
      await this.#run(config as JsonObject | null, () => {
        this.#root = { [CONFIG_KEY]: config };
        this.#rawJson = json;
        this.#ids = ids;
      });
    } catch (e) {
      const msg = e instanceof AdminError
        ? e.message
        : `loading new config: ${(e as Error).message}`;
      this.log.named("admin").error("config load failed", { error: msg });
      throw e instanceof AdminError ? e : new AdminError("load_failed", msg, { cause: e });
    }
    await this.#persist(config);
    return true;
  }

  /**
   * Decodes, provisions and starts `config`, then swaps it in. Everything that can fail (the
   * decoding of every section, the admin section included, the admin endpoint's listener and
   * its Host/Origin checks, every module, every listener) happens before the swap: on failure
   * the new config is cleaned up and the running one, with its listeners, is untouched.
   */
  async #run(config: JsonObject | null, commit: () => void): Promise<void> {
    // decodes the top level and the admin section (throws before anything is acquired)
    const ctx = this.#runner.context(config ? stripMeta(config) as JsonObject : null);
    let newAdmin: AdminState | undefined;
    let admin: AdminState | undefined;
    let adminHandler: ConnHandler | undefined;
    try {
      await ctx.provision();
      const adminCfg = ctx.admin;
      // with no default address (embedding), unloading keeps the endpoint it was reached on
      const listen = adminCfg.disabled
        ? undefined
        : (adminCfg.listen || this.options.defaultAdmin ||
          (config === null ? this.#admin?.listen : undefined));
      if (listen) {
        if (this.#admin && this.#admin.listen === listen) admin = this.#admin;
        else {
          const handle = await this.#adminPool.listen({ address: listen });
          admin = newAdmin = { listen, handle, address: handle.address };
        }
        const addr = parseNetworkAddress(admin.listen);
        adminHandler = createAdminHandler(
          this,
          adminSecurity(addr, admin.handle.port ?? 0, adminCfg),
        );
      }
      await ctx.start();
    } catch (e) {
      await newAdmin?.handle.release().catch(() => {});
      await ctx.cleanup().catch(() => {});
      throw e;
    }
    // swap: nothing from here on can fail the load
    const old = this.#ctx;
    const oldAdmin = this.#admin;
    this.#ctx = ctx;
    this.#logs = ctx.logs;
    commit();
    if (admin && adminHandler) admin.handle.setHandler(adminHandler);
    this.#admin = admin;
    if (oldAdmin && oldAdmin !== admin) {
      // not awaited: the request that caused this load is still being answered on it
      this.#track(oldAdmin.handle.release());
      this.log.named("admin").info("stopped previous admin endpoint", {
        address: oldAdmin.address,
      });
    }
    if (admin && admin !== oldAdmin) {
      this.log.named("admin").info("admin endpoint started", {
        address: admin.address,
        enforce_origin: ctx.admin.enforce_origin,
      });
    }
    if (old) await this.#retire(old);
    this.log.debug("config swapped in");
  }

  async #retire(ctx: LoadingConfig): Promise<void> {
    try {
      await ctx.stop();
    } catch (e) {
      this.log.error("stopping old config", { error: e as Error });
    }
    try {
      await ctx.cleanup();
    } catch (e) {
      this.log.error("cleaning up old config", { error: e as Error });
    }
  }

  #track(p: Promise<unknown>): void {
    const q = p.catch(() => {}).finally(() => this.#background.delete(q));
    this.#background.add(q);
  }

  async #persist(config: Json): Promise<void> {
    const path = this.options.autosavePath;
    if (!path || config === null) return;
    const admin = (config as JsonObject).admin as { config?: { persist?: boolean } } | undefined;
    if (admin?.config?.persist === false) return;
    try {
      await writeFileAtomic(path, new TextEncoder().encode(JSON.stringify(config)));
      this.log.info("autosaved config (load with --resume flag)", { file: path });
    } catch (e) {
      this.log.error("unable to autosave config", { file: path, error: e as Error });
    }
  }

  /** Provisions `config` without starting it, then cleans up (the `validate` command). */
  async validate(config: unknown): Promise<void> {
    if (config !== null && (typeof config !== "object" || Array.isArray(config))) {
      throw new AdminError("bad_request", "config must be a JSON object");
    }
    checkJsonNumbers(config, "decoding config");
    indexIds(config as Json);
    const ctx = new ConfigContext(
      config ? stripMeta(config as Json) as JsonObject : null,
      this.pool,
      { validating: true },
    );
    try {
      await ctx.provision();
    } finally {
      await ctx.cleanup();
    }
  }

  /** Asks the process to stop (POST /stop): calls `onStopRequest` or shuts down. */
  requestStop(): void {
    this.log.named("admin.api").warn("exiting; byeee!! 👋");
    if (this.options.onStopRequest) this.options.onStopRequest();
    else this.#track(this.shutdown());
  }

  /**
   * Stops everything: apps, modules, listeners, the admin endpoint. Resolves to the exit
   * code: 0, or 3 when some cleanup failed. `options.exitCode` is the code the process exits
   * with for another reason (1 after a failed start): the final log record reports it.
   */
  shutdown(graceMs?: number, options: { exitCode?: number } = {}): Promise<number> {
    this.#stopped = true;
    graceMs ??= this.options.gracePeriodMs ?? this.#configGrace();
    if (graceMs !== undefined) this.pool.gracePeriodMs = graceMs;
    const run = async () => {
      let code = 0;
      const ctx = this.#ctx;
      this.#ctx = undefined;
      if (ctx) {
        try {
          await ctx.stop();
        } catch (e) {
          code = 3;
          this.log.error("failed to stop apps", { error: e as Error });
        }
        try {
          await ctx.cleanup();
        } catch (e) {
          code = 3;
          this.log.error("cleanup failed", { error: e as Error });
        }
      }
      try {
        const closed = await this.#runner.close(graceMs);
        if (typeof closed === "number" && closed !== 0) code = closed;
      } catch (e) {
        code = 3;
        this.log.error("closing listeners failed", { error: e as Error });
      }
      this.#admin = undefined;
      await this.#adminPool.closeAll(graceMs ?? 2000);
      while (this.#background.size) await Promise.all(this.#background);
      if (options.exitCode !== undefined && options.exitCode !== 0) {
        this.log.error("shutdown after a failed start", {
          exit_code: options.exitCode,
          ...(code !== 0 ? { cleanup_exit_code: code } : {}),
        });
      } else if (code === 0) this.log.info("shutdown complete", { exit_code: 0 });
      else this.log.error("unclean shutdown", { exit_code: code });
      await this.#logs.flush().catch(() => {});
      return code;
    };
    const p = this.#queue.then(run, run);
    this.#queue = p.catch(() => {});
    return p;
  }

  /** The running config's `apps.http.grace_period` (ms), if it has one. */
  #configGrace(): number | undefined {
    const raw = (this.config as { apps?: { http?: { grace_period?: unknown } } } | null)?.apps
      ?.http?.grace_period;
    try {
      return raw === undefined || raw === null ? undefined : durationMs(raw);
    } catch {
      return undefined;
    }
  }

  /** Unloads the config (like DELETE /config/); the admin endpoint stays up. */
  unload(): Promise<boolean> {
    return this.load(null);
  }
}
