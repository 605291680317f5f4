/**
 * Plugin packages: how a package (npm, or JSR where reachable) adds modules to Gatehouse.
 *
 * The contract: the package's main entry exports a `gatehouse` object ({@linkcode
 * GatehousePlugin}) listing module definitions (handlers, matchers, storages, log writers... any
 * namespace) and optionally config adapters. Loading a plugin registers all of them under their
 * ids, tagged with the package and version (`list-modules --packages --versions`), or none: an
 * id that is invalid or already taken refuses the whole package.
 *
 * @module
 */
import { type ConfigAdapter, getAdapter, registerAdapter } from "./adapter.ts";
import { type ModuleDefinition, type ModuleOrigin, registerModules } from "./module/mod.ts";

/**
 * What a plugin package exports under the name `gatehouse`.
 *
 * @example
 * ```ts
 * import type { GatehousePlugin } from "./plugin.ts";
 * export const gatehouse: GatehousePlugin = {
 *   modules: [{
 *     id: "http.handlers.hello",
 *     create: () => ({ serveHTTP: () => new Response("hello") }),
 *   }],
 * };
 * ```
 */
export interface GatehousePlugin {
  /** Module definitions, registered under their ids (e.g. `http.handlers.greet`). */
  modules?: ModuleDefinition[];
  /** Config adapters, registered under their names (listed as `caddy.adapters.<name>`). */
  adapters?: ConfigAdapter[];
}

/** A plugin package as the command line loads it: where it comes from and what it exported. */
export interface PluginPackage {
  /** The package, e.g. `npm:gatehouse-plugin-greet`. */
  package: string;
  /** Its version, e.g. `1.0.0` (empty when unknown). */
  version: string;
  /** The package's module namespace (what `import * as ns from "<package>"` gives). */
  exports: Record<string, unknown>;
}

/** Why a package could not be loaded as a plugin. */
export type PluginErrorCode =
  | "load_failed"
  | "not_a_plugin"
  | "empty"
  | "invalid"
  | "conflict";

/** A package that is not a usable plugin; the message names the package and what to do. */
export class PluginError extends Error {
  /** Stable code, see {@linkcode PluginErrorCode}. */
  readonly code: PluginErrorCode;
  /** The package concerned. */
  readonly package: string;
  /** Builds the error. */
  constructor(code: PluginErrorCode, pkg: string, message: string, options?: ErrorOptions) {
    super(`plugin ${pkg}: ${message}`, options);
    this.name = "PluginError";
    this.code = code;
    this.package = pkg;
  }
}

const adapterOrigins = new Map<string, ModuleOrigin>();

/** Explains the contract, appended to errors about a package that does not follow it. */
const CONTRACT =
  "a Gatehouse plugin's main entry exports `gatehouse = { modules: [...], adapters?: [...] }` " +
  '(see docs/server.md, "Plugins and upgrades")';

/**
 * Registers the modules and adapters of a plugin package, all or none. Returns the ids it
 * registered (adapters as `caddy.adapters.<name>`). Throws a {@linkcode PluginError}.
 *
 * @example
 * ```ts
 * import { loadPlugin } from "./plugin.ts";
 * const ids = loadPlugin({
 *   package: "npm:gatehouse-plugin-hello",
 *   version: "1.0.0",
 *   exports: {
 *     gatehouse: {
 *       modules: [{
 *         id: "http.handlers.hello",
 *         create: () => ({ serveHTTP: () => new Response("hello") }),
 *       }],
 *     },
 *   },
 * });
 * ids; // ["http.handlers.hello"]
 * ```
 */
export function loadPlugin(pkg: PluginPackage): string[] {
  const origin: ModuleOrigin = { package: pkg.package, version: pkg.version };
  const plugin = pkg.exports.gatehouse as GatehousePlugin | undefined;
  if (plugin === null || typeof plugin !== "object") {
    throw new PluginError(
      "not_a_plugin",
      pkg.package,
      `it exports no \`gatehouse\` object; ${CONTRACT}`,
    );
  }
  const modules = plugin.modules ?? [];
  const adapters = plugin.adapters ?? [];
  if (!Array.isArray(modules) || !Array.isArray(adapters)) {
    throw new PluginError(
      "invalid",
      pkg.package,
      `\`gatehouse.modules\` and \`gatehouse.adapters\` must be arrays; ${CONTRACT}`,
    );
  }
  if (modules.length === 0 && adapters.length === 0) {
    throw new PluginError("empty", pkg.package, `it provides no modules; ${CONTRACT}`);
  }
  const names = new Set<string>();
  for (const a of adapters) {
    if (a === null || typeof a !== "object" || typeof a.name !== "string") {
      throw new PluginError("invalid", pkg.package, `an adapter has no name; ${CONTRACT}`);
    }
    if (!/^[a-z0-9_]+$/.test(a.name) || typeof a.adapt !== "function") {
      throw new PluginError(
        "invalid",
        pkg.package,
        `adapter ${JSON.stringify(a.name)} needs a lower-case name and an adapt function`,
      );
    }
    if (getAdapter(a.name) || names.has(a.name)) {
      throw new PluginError(
        "conflict",
        pkg.package,
        `config adapter already registered: ${a.name}`,
      );
    }
    names.add(a.name);
  }
  try {
    registerModules(modules, origin);
  } catch (e) {
    throw new PluginError("conflict", pkg.package, (e as Error).message, { cause: e });
  }
  for (const a of adapters) {
    registerAdapter(a);
    adapterOrigins.set(a.name, origin);
  }
  return [
    ...modules.map((m) => m.id),
    ...adapters.map((a) => `caddy.adapters.${a.name}`),
  ];
}

/**
 * The plugin package a config adapter comes from, or undefined for a standard adapter.
 *
 * @example
 * ```ts
 * import { adapterOrigin } from "./plugin.ts";
 * adapterOrigin("json5"); // undefined: standard
 * ```
 */
export function adapterOrigin(name: string): ModuleOrigin | undefined {
  const origin = adapterOrigins.get(name);
  return origin ? { ...origin } : undefined;
}
