/**
 * The contract between the config engine and every module of the web server.
 *
 * A module is identified by a Caddy-style id: a dotted namespace plus a name, e.g.
 * `http.handlers.static_response` (namespace `http.handlers`, name `static_response`).
 * Apps live in the empty namespace (`http`, `pki`, `tls`). A module definition turns its
 * raw JSON config into a live instance (`create` = Caddy's decode + Provision), may check
 * the result (`validate`), and releases what it holds in `cleanup` when a config is
 * replaced or unloaded.
 *
 * @module
 */

import type { App, Logger, ModuleInstance } from "./instance.ts";
import type { ListenerHandle, ListenOptions } from "./listener.ts";
import type { Storage } from "./storage.ts";

/** An admin API route that a module registers while provisioned (e.g. `/reverse_proxy/upstreams`). */
export interface AdminRoute {
  /** Path prefix, e.g. `/pki/ca/`. */
  pattern: string;
  /** Handles a request under the prefix. Throw an `AdminError` (see admin) for an error status. */
  handle(request: Request): Response | Promise<Response>;
}

/** What a module receives while it is provisioned. */
export interface ProvisionContext {
  /**
   * Loads a nested module whose name is the value of `inlineKey` inside `raw`
   * (Caddy's `inline_key`), e.g. `loadModule("http.handlers", "handler", {"handler":"static_response",...})`.
   * The module's cleanup is tied to the config being provisioned.
   */
  loadModule<T extends ModuleInstance>(
    namespace: string,
    inlineKey: string,
    raw: unknown,
  ): Promise<T>;
  /** Loads a module by explicit name (for map-shaped config such as matcher sets `{"host": [...]}`). */
  loadModuleByName<T extends ModuleInstance>(
    namespace: string,
    name: string,
    raw: unknown,
  ): Promise<T>;
  /** A logger; names usually derive from module ids. */
  logger(name: string): Logger;
  /** Another app of the same config, provisioned on demand (e.g. `tls` from `http`). */
  app<T extends App>(name: string): Promise<T | undefined>;
  /** Acquires a listener from the pool (see ListenerHandle). */
  listen(options: ListenOptions): Promise<ListenerHandle>;
  /** The configured storage. */
  storage: Storage;
  /** Registers an admin API route for as long as this config runs. */
  registerAdminRoute(route: AdminRoute): void;
  /** Registers a cleanup to run when this config is replaced or unloaded. */
  onCleanup(fn: () => void | Promise<void>): void;
  /** Aborted when the config being provisioned is discarded or stopped. */
  signal: AbortSignal;
  /**
   * True when the config is only being validated (`gatehouse validate`, `adapt --validate`):
   * modules check everything they can but bind no socket and start nothing (no timers, health
   * checks or exporters); `listen` then checks the address and returns an unbound handle.
   */
  readonly validating: boolean;
}

/** A module definition: a registry entry. */
export interface ModuleDefinition<T extends ModuleInstance = ModuleInstance> {
  /** The full module id, e.g. `http.handlers.static_response`. */
  id: string;
  /** Decodes and provisions an instance from its raw JSON config. Throw on invalid config. */
  create(config: Record<string, unknown>, ctx: ProvisionContext): T | Promise<T>;
}

/**
 * Where a registered module comes from: the package that provides it. Modules registered
 * without an origin are the standard ones, shipped in the gatehouse package itself.
 */
export interface ModuleOrigin {
  /** The package, as installed: e.g. `npm:gatehouse-plugin-greet` or `jsr:@acme/gatehouse`. */
  package: string;
  /** The package's version, e.g. `1.0.0` (empty when unknown). */
  version: string;
}

const registry = new Map<string, ModuleDefinition>();
const origins = new Map<string, ModuleOrigin>();

const MODULE_ID = /^([a-z0-9_]+(\.[a-z0-9_]+)*)$/;

/**
 * Registers a module so configs can use it. Throws when the id is taken. `origin` names the
 * package that provides it (plugin packages); standard modules have none.
 *
 * @example
 * ```ts
 * import { registerModule } from "./mod.ts";
 * registerModule({
 *   id: "http.handlers.hello",
 *   create: () => ({ serveHTTP: () => new Response("hello") }),
 * });
 * ```
 */
export function registerModule<T extends ModuleInstance>(
  definition: ModuleDefinition<T>,
  origin?: ModuleOrigin,
): void {
  registerModules([definition as unknown as ModuleDefinition], origin);
}

/**
 * Registers several modules at once, all or none: when one id is invalid, taken, or listed
 * twice, it throws and registers nothing (how plugin packages are loaded).
 *
 * @example
 * ```ts
 * import { registerModules } from "./mod.ts";
 * registerModules([
 *   { id: "http.handlers.hi", create: () => ({ serveHTTP: () => new Response("hi") }) },
 * ], { package: "npm:gatehouse-plugin-hi", version: "1.0.0" });
 * ```
 */
export function registerModules(definitions: ModuleDefinition[], origin?: ModuleOrigin): void {
  const ids = new Set<string>();
  for (const definition of definitions) {
    if (typeof definition?.id !== "string" || !MODULE_ID.test(definition.id)) {
      throw new TypeError(`invalid module id: ${JSON.stringify(definition?.id)}`);
    }
    if (typeof definition.create !== "function") {
      throw new TypeError(`module ${definition.id}: create must be a function`);
    }
    if (registry.has(definition.id) || ids.has(definition.id)) {
      const by = origins.get(definition.id);
      throw new Error(
        `module already registered: ${definition.id}` +
          (registry.has(definition.id) ? ` (by ${by ? by.package : "gatehouse"})` : ""),
      );
    }
    ids.add(definition.id);
  }
  for (const definition of definitions) {
    registry.set(definition.id, definition);
    if (origin) origins.set(definition.id, { ...origin });
  }
}

/**
 * A module whose code loads when a config first uses it: a server carries only the modules
 * its config names (each unused one would cost start-up time and memory).
 *
 * @example
 * ```ts
 * import { lazyModule, registerModule } from "./mod.ts";
 * registerModule(lazyModule("http.handlers.hello", async () => ({
 *   id: "http.handlers.hello",
 *   create: () => ({ serveHTTP: () => new Response("hello") }),
 * })));
 * ```
 */
export function lazyModule(id: string, load: () => Promise<ModuleDefinition>): ModuleDefinition {
  let loading: Promise<ModuleDefinition> | undefined;
  return {
    id,
    async create(config, ctx) {
      const def = await (loading ??= load());
      if (def.id !== id) throw new Error(`module ${id} loaded as ${def.id}`);
      return await def.create(config, ctx);
    },
  };
}

/**
 * One module of a kind's table: its id and how its definition loads. A kind's entries may
 * name more (the http handlers' name their Gatehousefile syntax and writer); the registry
 * needs these two.
 */
export interface ModuleEntry {
  /** The full module id. */
  id: string;
  /** Loads the module's definition (its code loads only when a config first uses it). */
  load(): Promise<ModuleDefinition>;
}

/**
 * Registers every entry of a table as a module whose code loads on first use, skipping ids
 * already registered (a table may be registered more than once).
 *
 * @example
 * ```ts
 * import { registerTable } from "./mod.ts";
 * registerTable([{
 *   id: "http.handlers.hello",
 *   load: () => Promise.resolve({ id: "http.handlers.hello", create: () => ({ serveHTTP: () => new Response("hello") }) }),
 * }]);
 * ```
 */
export function registerTable(entries: readonly ModuleEntry[]): void {
  const missing = entries.filter((e) => !registry.has(e.id));
  registerModules(missing.map((e) => lazyModule(e.id, e.load)));
}

/**
 * Looks up a module definition by id.
 *
 * @example
 * ```ts
 * import { getModule } from "./mod.ts";
 * getModule("http.handlers.static_response")?.id;
 * ```
 */
export function getModule(id: string): ModuleDefinition | undefined {
  return registry.get(id);
}

/**
 * The package a registered module comes from, or undefined for a standard module (and for an
 * id nothing registered).
 *
 * @example
 * ```ts
 * import { moduleOrigin } from "./mod.ts";
 * moduleOrigin("http.handlers.static_response"); // undefined: standard
 * ```
 */
export function moduleOrigin(id: string): ModuleOrigin | undefined {
  const origin = origins.get(id);
  return origin ? { ...origin } : undefined;
}

/**
 * Lists the ids of all registered modules, sorted.
 *
 * @example
 * ```ts
 * import { listModules } from "./mod.ts";
 * console.log(listModules().join("\n"));
 * ```
 */
export function listModules(): string[] {
  return [...registry.keys()].sort();
}
