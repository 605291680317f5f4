/**
 * What the command line knows about the program it runs in: the installation it was started
 * from (an installed launcher's generation) and the plugin packages loaded into the module
 * registry before the command ran.
 *
 * @module
 */
import { type Installation, readInstallation } from "./installation.ts";
import { loadPlugin, PluginError } from "../server/plugin.ts";
import { VERSION } from "../version.ts";

/** A plugin package for `main` to load before the command runs. */
export interface PluginSource {
  /** The package, e.g. `npm:gatehouse-plugin-greet` (what `list-modules --packages` prints). */
  package: string;
  /** Its version; an installed gatehouse takes it from its manifest. */
  version?: string;
  /** Imports the package's main entry. */
  load(): Promise<Record<string, unknown>>;
}

/** Options of `main` for a program that is more than the plain command line. */
export interface MainOptions {
  /**
   * The URL of an installed generation's entry (`import.meta.url` of
   * `<root>/generations/<n>/main.ts`), written by `gatehouse install`: enables `upgrade`,
   * `add-package` and `remove-package`, and `start` re-runs that entry.
   */
  installation?: string;
  /** Plugin packages to load (an installed entry lists its own; a custom entry its choice). */
  plugins?: PluginSource[];
}

/** A plugin package that was loaded, with the ids it registered. */
export interface LoadedPlugin {
  /** The package, e.g. `npm:gatehouse-plugin-greet`. */
  package: string;
  /** Its version. */
  version: string;
  /** Module ids it registered (adapters as `caddy.adapters.<name>`). */
  ids: string[];
}

let installation: Installation | undefined;
const loaded: LoadedPlugin[] = [];

/**
 * The installation this process was started from, or undefined (a source checkout, a package
 * run directly, a custom entry, a compiled binary).
 *
 * @example
 * ```ts
 * import { currentInstallation } from "./plugins.ts";
 * currentInstallation()?.manifest.gatehouse.version;
 * ```
 */
export function currentInstallation(): Installation | undefined {
  return installation;
}

/**
 * The plugin packages loaded in this process.
 *
 * @example
 * ```ts
 * import { loadedPlugins } from "./plugins.ts";
 * loadedPlugins().map((p) => `${p.package} ${p.version}`);
 * ```
 */
export function loadedPlugins(): LoadedPlugin[] {
  return loaded.map((p) => ({ ...p, ids: [...p.ids] }));
}

/**
 * The package the standard modules ship in, as `list-modules --packages` prints it: the
 * installed one, else `npm:` when this code runs from the npm mirror, else `jsr:` (a source
 * checkout or the JSR package).
 *
 * @example
 * ```ts
 * import { gatehousePackage } from "./plugins.ts";
 * gatehousePackage().package; // e.g. "jsr:@gatehouse/gatehouse"
 * ```
 */
export function gatehousePackage(): { package: string; version: string } {
  if (installation) return { package: installation.manifest.gatehouse.package, version: VERSION };
  const fromNpm = /\/npm\/.*@gatehouse\/gatehouse\//.test(import.meta.url) ||
    import.meta.url.startsWith("npm:");
  return { package: `${fromNpm ? "npm" : "jsr"}:@gatehouse/gatehouse`, version: VERSION };
}

/**
 * How to run this program's entry again (`start` runs it in the background): the installed
 * generation's config and entry, or undefined when this is not an installed gatehouse.
 *
 * @example
 * ```ts
 * import { installedEntry } from "./plugins.ts";
 * installedEntry()?.entry; // "/opt/gatehouse/generations/3/main.ts"
 * ```
 */
export function installedEntry(): { config: string; entry: string } | undefined {
  if (!installation) return undefined;
  return { config: `${installation.dir}/deno.json`, entry: `${installation.dir}/main.ts` };
}

/**
 * Reads the installation and loads the plugin packages of `options` into the module registry
 * (after the standard modules, so that a plugin cannot take a standard id). Throws a
 * PluginError naming the package that failed; packages loaded before it stay loaded.
 *
 * @example
 * ```ts ignore
 * import { prepareProgram } from "./plugins.ts";
 * await prepareProgram({
 *   plugins: [{ package: "npm:gatehouse-plugin-greet", load: () => import("npm:gatehouse-plugin-greet") }],
 * });
 * ```
 */
export async function prepareProgram(options: MainOptions): Promise<void> {
  if (options.installation && !installation) {
    installation = await readInstallation(options.installation);
  }
  const sources = options.plugins ?? [];
  if (sources.length === 0) return;
  await import("../server/standard.ts");
  for (const source of sources) {
    if (loaded.some((p) => p.package === source.package)) continue;
    const version = source.version ??
      installation?.manifest.plugins.find((p) => p.package === source.package)?.version ?? "";
    let exports: Record<string, unknown>;
    try {
      exports = await source.load();
    } catch (e) {
      throw new PluginError(
        "load_failed",
        source.package,
        `importing it failed: ${(e as Error)?.message ?? e}`,
        { cause: e },
      );
    }
    const ids = loadPlugin({ package: source.package, version, exports });
    loaded.push({ package: source.package, version, ids });
  }
}
