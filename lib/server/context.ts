/**
 * A config context: one config decoded and provisioned into live modules (logging, storage,
 * apps), validated, then started or discarded. Everything a context acquires (modules,
 * listeners, admin routes, cleanups) is released by `cleanup`, so a failed load leaks nothing.
 *
 * @module
 */
import { type AdminRoute, getModule, listModules, type ProvisionContext } from "./module/mod.ts";
import type { Storage } from "./module/storage.ts";
import type { ListenerHandle, ListenOptions } from "./module/listener.ts";
import type { App, Logger, ModuleInstance } from "./module/instance.ts";
import { LogPipeline } from "./logging/pipeline.ts";
import type { ListenerPool } from "./listeners/pool.ts";
import { fileStorage } from "./storage/file_system.ts";
import type { JsonObject } from "./config_tree.ts";
import { parseNetworkAddress } from "./net/address.ts";
import { unknownModuleMessage } from "./unavailable.ts";
import { type AdminConfig, decodeAdminConfig } from "./config/admin.ts";
import { Decoder } from "./config/decode.ts";

export type { AdminConfig };

/** Top-level keys of a config. */
export const TOP_LEVEL_KEYS: readonly string[] = ["admin", "logging", "storage", "apps"];

/**
 * Decodes the top level of a config strictly (as Caddy's `Config`): only the known keys,
 * `admin` fully (see `config/admin.ts`), `logging` and `storage` as objects, `apps` as an
 * object of objects. Module configs inside are decoded by their modules when provisioned.
 */
export function decodeTopLevel(config: JsonObject): AdminConfig {
  const top = Decoder.of(config, "config").fields(TOP_LEVEL_KEYS);
  const admin = decodeAdminConfig(top.value("admin"));
  top.rawObject("logging");
  top.rawObject("storage");
  // the apps stand at `apps.<name>` in messages, as Caddy names them
  const apps = new Decoder(top.rawObject("apps") ?? {}, "apps");
  for (const [name, raw] of Object.entries(apps.raw)) {
    if (raw === null) apps.failAt(name, "module value cannot be null");
    Decoder.of(raw, apps.at(name));
  }
  return admin;
}

function moduleError(id: string, e: unknown): Error {
  const msg = e instanceof Error ? e.message : String(e);
  return new Error(`${id}: ${msg}`, { cause: e });
}

/**
 * The listener handle of a config that is only validated: the address is checked as a real
 * listen would (network, one port), nothing is bound.
 */
function unboundHandle(address: string): ListenerHandle {
  // an inherited socket (`fd/N`, `fdgram/N`) has no address to check
  const inherited = /^(fd|fdgram)\/\d+$/.exec(address);
  const addr = inherited
    ? { network: inherited[1], startPort: 0, endPort: 0 }
    : parseNetworkAddress(address);
  if (addr.startPort !== addr.endPort) {
    throw new Error(`listen: one port per listener, got range ${address}`);
  }
  if (addr.network.startsWith("udp") && !/^udp[46]?$/.test(addr.network)) {
    throw new Error(`listen: ${addr.network} is not supported`);
  }
  return {
    address,
    port: addr.network.startsWith("unix") || inherited ? undefined : addr.startPort,
    setHandler() {},
    release: () => Promise.resolve(),
  };
}

/** One provisioned config. */
export class ConfigContext {
  readonly config: JsonObject;
  readonly admin: AdminConfig;
  logs!: LogPipeline;
  storage!: Storage;
  readonly apps = new Map<string, App>();
  readonly adminRoutes: AdminRoute[] = [];
  readonly #instances: ModuleInstance[] = [];
  readonly #cleanups: (() => void | Promise<void>)[] = [];
  readonly #handles: ListenerHandle[] = [];
  readonly #listenCount = new Map<string, number>();
  readonly #abort = new AbortController();
  readonly #provisioning = new Set<string>();
  readonly #started: App[] = [];
  #cleaned = false;
  #startCalled = false;

  /** True when this context only validates (binds nothing, starts nothing). */
  readonly validating: boolean;

  readonly #buildLogs?: (raw: unknown) => Promise<LogPipeline>;
  readonly #logsOnly: boolean;

  /**
   * `options.validating`: provision only, bind nothing. `options.logs`: builds the log
   * pipeline from the `logging` section instead of {@linkcode LogPipeline.build} (a worker
   * process hands its messages to the primary, which writes them). `options.logsOnly`:
   * provisions the log pipeline alone (the primary process of workers writes their logs).
   */
  constructor(
    config: JsonObject | null,
    readonly pool: ListenerPool,
    options: {
      validating?: boolean;
      logs?: (raw: unknown) => Promise<LogPipeline>;
      logsOnly?: boolean;
    } = {},
  ) {
    this.validating = options.validating ?? false;
    this.#buildLogs = options.logs;
    this.#logsOnly = options.logsOnly ?? false;
    this.config = config ?? {};
    this.admin = decodeTopLevel(this.config);
  }

  /** A logger writing to this context's logs. */
  logger(name: string): Logger {
    return this.logs.logger(name);
  }

  /** Provisions logging, storage and every app, then runs every module's validate. */
  async provision(): Promise<void> {
    this.logs = this.#buildLogs
      ? await this.#buildLogs(this.config.logging)
      : await LogPipeline.build(this.config.logging, (ns, key, raw) => this.load(ns, key, raw));
    if (this.#logsOnly) return;
    if (this.config.storage !== undefined && this.config.storage !== null) {
      this.storage = await this.load<Storage & ModuleInstance>(
        "caddy.storage",
        "module",
        this.config.storage,
      );
    } else {
      this.storage = fileStorage();
    }
    const apps = this.config.apps ?? {};
    for (const name of Object.keys(apps)) {
      try {
        await this.app(name);
      } catch (e) {
        throw new Error(`loading app modules: module name '${name}': ${(e as Error).message}`, {
          cause: e,
        });
      }
    }
    // Admin endpoint modules (`admin.api.*`) are part of every config, as in Caddy.
    for (const id of listModules()) {
      if (id.startsWith("admin.api.")) await this.#create(id, {});
    }
    for (const m of this.#instances) {
      if (m.validate) await m.validate();
    }
  }

  /** Starts every app; on failure stops the ones already started and rethrows. */
  async start(): Promise<void> {
    this.#startCalled = true;
    for (const [name, app] of this.apps) {
      try {
        await app.start();
        this.#started.push(app);
      } catch (e) {
        await this.stop();
        throw new Error(`starting app '${name}': ${(e as Error).message}`, { cause: e });
      }
    }
  }

  /** Stops started apps (errors are collected and rethrown as one). */
  async stop(): Promise<void> {
    const errors: string[] = [];
    for (const app of this.#started.splice(0).reverse()) {
      try {
        await app.stop();
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (errors.length) throw new Error(`stopping apps: ${errors.join("; ")}`);
  }

  /** Releases every module, listener and registered cleanup (idempotent). */
  async cleanup(): Promise<void> {
    if (this.#cleaned) return;
    this.#cleaned = true;
    this.#abort.abort();
    const errors: string[] = [];
    const run = async (fn: () => void | Promise<void>) => {
      try {
        await fn();
      } catch (e) {
        errors.push((e as Error).message);
      }
    };
    for (const fn of this.#cleanups.splice(0).reverse()) await run(fn);
    for (const m of this.#instances.splice(0).reverse()) {
      if (m.cleanup) await run(() => m.cleanup!());
    }
    await Promise.all(this.#handles.splice(0).map((h) => run(() => h.release())));
    if (errors.length) throw new Error(`cleanup: ${errors.join("; ")}`);
  }

  /** Provisions an app of this config (on demand; each app once). */
  async app<T extends App>(name: string): Promise<T | undefined> {
    const existing = this.apps.get(name);
    if (existing) return existing as T;
    const apps = (this.config.apps ?? {}) as JsonObject;
    const configured = Object.hasOwn(apps, name);
    // An app another module needs while the config provisions is provisioned (with an empty
    // config) and started with the others, as Caddy's ctx.App does (e.g. `pki` for the
    // `internal` issuer, `tls` for automatic HTTPS). Once started, only configured apps exist.
    if (!configured && (this.#startCalled || !getModule(name))) return undefined;
    if (this.#provisioning.has(name)) throw new Error(`app '${name}' depends on itself`);
    this.#provisioning.add(name);
    try {
      const raw = configured ? apps[name] ?? {} : {};
      const app = await this.#create<T>(name, raw);
      if (typeof app.start !== "function" || typeof app.stop !== "function") {
        throw new Error(`module '${name}' is not an app`);
      }
      this.apps.set(name, app);
      return app;
    } finally {
      this.#provisioning.delete(name);
    }
  }

  /** Loads a module whose name sits under `inlineKey` in `raw`. */
  load<T>(namespace: string, inlineKey: string, raw: unknown): Promise<T> {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      return Promise.reject(new Error(`${namespace}: module config must be an object`));
    }
    const obj = raw as Record<string, unknown>;
    const name = obj[inlineKey];
    if (typeof name !== "string" || name === "") {
      return Promise.reject(
        new Error(
          `${namespace}: module name not specified with key '${inlineKey}' in ${
            JSON.stringify(raw)
          }`,
        ),
      );
    }
    const { [inlineKey]: _, ...rest } = obj;
    return this.#create<T>(namespace ? `${namespace}.${name}` : name, rest);
  }

  async #create<T>(id: string, raw: unknown): Promise<T> {
    const def = getModule(id);
    if (!def) throw new Error(unknownModuleMessage(id));
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      throw new Error(`${id}: config must be a JSON object`);
    }
    let instance: ModuleInstance;
    try {
      instance = await def.create(raw as Record<string, unknown>, this.#provisionContext(id));
    } catch (e) {
      throw moduleError(id, e);
    }
    this.#instances.push(instance);
    return instance as T;
  }

  #provisionContext(id: string): ProvisionContext {
    // deno-lint-ignore no-this-alias
    const ctx = this;
    return {
      loadModule: <T extends ModuleInstance>(ns: string, key: string, raw: unknown) =>
        ctx.load<T>(ns, key, raw),
      loadModuleByName: <T extends ModuleInstance>(ns: string, name: string, raw: unknown) =>
        ctx.#create<T>(ns ? `${ns}.${name}` : name, raw ?? {}),
      logger: (name: string) => ctx.logs.logger(name || id),
      app: <T extends App>(name: string) => ctx.app<T>(name),
      listen: async (options: ListenOptions) => {
        if (ctx.validating) return unboundHandle(options.address);
        const n = (ctx.#listenCount.get(options.address) ?? 0) + 1;
        ctx.#listenCount.set(options.address, n);
        const h = await ctx.pool.listen(options, n);
        ctx.#handles.push(h);
        return h;
      },
      get storage() {
        return ctx.storage;
      },
      registerAdminRoute: (route: AdminRoute) => void ctx.adminRoutes.push(route),
      onCleanup: (fn: () => void | Promise<void>) => void ctx.#cleanups.push(fn),
      signal: ctx.#abort.signal,
      validating: ctx.validating,
    };
  }
}
