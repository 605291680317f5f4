/**
 * An installed gatehouse: the files of an install directory and what they hold.
 *
 * ```
 * <root>/bin/gatehouse              launcher (POSIX sh): runs the active generation
 * <root>/current                    name of the active generation (replaced atomically)
 * <root>/generations/<n>/main.ts    entry: imports the gatehouse CLI and the plugin packages
 * <root>/generations/<n>/deno.json  nodeModulesDir none, frozen lock, dependency-age policy
 * <root>/generations/<n>/deno.lock  every resolved package version and its integrity hash
 * <root>/generations/<n>/gatehouse.json  manifest: requested packages, resolved versions
 * <root>/cache/                     DENO_DIR: downloaded packages, one directory per version
 * <root>/.lock                      held while an install, upgrade or package change runs
 * ```
 *
 * A generation never changes once active; a change builds a new one beside it and switches
 * `current`. Package files live in the shared cache, one directory per name and version, and
 * are never deleted by a change, so a server started from an older generation keeps loading
 * its own versions (lazily loaded handlers included) after an upgrade.
 *
 * @module
 */
import { packageId, type PackageRequest, packageSpecifier } from "./package_spec.ts";
import denoJson from "../../deno.json" with { type: "json" };

/** Imports that are not the server's: the sign-in pages' UI libraries, an app's own. */
const NOT_SERVER = new Set(["react", "@types/react", "preact", "preact-render-to-string"]);

/**
 * The npm packages the server loads when a config uses a feature (`@peculiar/x509` for the local
 * CA, `acme-client` for ACME, ...), as `npm:name@range` with the ranges of this gatehouse's
 * `deno.json`: the npm package of gatehouse lists them as optional peer dependencies, which Deno
 * resolves only when the program itself names them.
 */
export function serverPackages(): string[] {
  const out = new Set<string>();
  for (const value of Object.values(denoJson.imports as Record<string, string>)) {
    const m = value.match(/^npm:\/?((?:@[^/@]+\/)?[^/@]+)@([^/]+)/);
    if (m && !NOT_SERVER.has(m[1])) out.add(`npm:${m[1]}@${m[2]}`);
  }
  return [...out].sort();
}

/** A package of an installation: as requested, and as resolved. */
export interface InstalledPackage {
  /** The request as written to `add-package` or `install`, e.g. `npm:gatehouse-plugin-greet@^1`. */
  request: string;
  /** The package identity, e.g. `npm:gatehouse-plugin-greet`. */
  package: string;
  /** The version resolved and locked, e.g. `1.0.0`. */
  version: string;
}

/** `gatehouse.json` of a generation. */
export interface InstallManifest {
  /** Manifest format, 1. */
  format: 1;
  /** Gatehouse itself (`upgrade` always resolves the latest release of it). */
  gatehouse: InstalledPackage;
  /** The plugin packages, in the order they were added. */
  plugins: InstalledPackage[];
  /** Deno's `minimumDependencyAge` for resolving releases (unset: Deno's default). */
  minimumDependencyAge?: string;
  /** When this generation was built (ISO 8601). */
  created: string;
}

/** The paths of an install directory. */
export interface InstallLayout {
  /** The install directory. */
  root: string;
  /** `bin/gatehouse`, the launcher. */
  launcher: string;
  /** `current`, naming the active generation. */
  current: string;
  /** `generations/`. */
  generations: string;
  /** `cache/`, the DENO_DIR of the installation. */
  cache: string;
  /** `.lock`, held during changes. */
  lock: string;
}

/**
 * The paths of an install directory.
 *
 * @example
 * ```ts
 * import { installLayout } from "./installation.ts";
 * installLayout("/opt/gatehouse").launcher; // "/opt/gatehouse/bin/gatehouse"
 * ```
 */
export function installLayout(root: string): InstallLayout {
  const r = root.replace(/\/+$/, "") || "/";
  return {
    root: r,
    launcher: `${r}/bin/gatehouse`,
    current: `${r}/current`,
    generations: `${r}/generations`,
    cache: `${r}/cache`,
    lock: `${r}/.lock`,
  };
}

/** The running program's installation, when it was started by an installed launcher. */
export interface Installation {
  /** Paths of the install directory. */
  layout: InstallLayout;
  /** The generation this process runs (a name under `generations/`). */
  generation: string;
  /** That generation's directory. */
  dir: string;
  /** That generation's manifest. */
  manifest: InstallManifest;
}

/**
 * Reads the installation an entry (`generations/<n>/main.ts`, by its URL) belongs to.
 *
 * @example
 * ```ts ignore
 * import { readInstallation } from "./installation.ts";
 * const inst = await readInstallation("file:///opt/gatehouse/generations/3/main.ts");
 * inst.manifest.gatehouse.version;
 * ```
 */
export async function readInstallation(entryUrl: string): Promise<Installation> {
  const url = new URL(".", entryUrl);
  if (url.protocol !== "file:") {
    throw new Error(`an installed gatehouse runs from a file, not ${entryUrl}`);
  }
  const dir = decodeURIComponent(url.pathname).replace(/\/$/, "");
  const generation = dir.slice(dir.lastIndexOf("/") + 1);
  const generations = dir.slice(0, dir.lastIndexOf("/"));
  if (!generations.endsWith("/generations")) {
    throw new Error(`${dir} is not a generation of an install directory (no generations/ parent)`);
  }
  const root = generations.slice(0, -"/generations".length) || "/";
  const manifest = JSON.parse(await Deno.readTextFile(`${dir}/gatehouse.json`)) as InstallManifest;
  if (manifest.format !== 1) {
    throw new Error(`${dir}/gatehouse.json: unknown manifest format ${manifest.format}`);
  }
  return { layout: installLayout(root), generation, dir, manifest };
}

/**
 * The entry of a generation: imports gatehouse's command line and, lazily, each plugin package;
 * for gatehouse from npm, also names (lazily) the packages its server loads when a config uses
 * them ({@linkcode serverPackages}). Import specifiers are string literals so that
 * `deno install --entrypoint` and the lock file cover every package.
 *
 * @example
 * ```ts
 * import { entrySource } from "./installation.ts";
 * entrySource({ registry: "npm", name: "@gatehouse/gatehouse", range: "" }, []);
 * ```
 */
export function entrySource(gatehouse: PackageRequest, plugins: PackageRequest[]): string {
  const lines = [
    "// The entry of one generation of an installed gatehouse, written by `gatehouse install`,",
    "// `upgrade`, `add-package` or `remove-package`. Do not edit: the next change writes a new",
    "// generation. The versions are pinned by deno.lock beside this file.",
    `import { main } from ${JSON.stringify(packageSpecifier(gatehouse, "/cli"))};`,
    "",
    "Deno.exit(",
    "  await main(Deno.args, {",
    "    installation: import.meta.url,",
    ...(plugins.length === 0 ? ["    plugins: [],"] : [
      "    plugins: [",
      ...plugins.map((p) =>
        `      { package: ${JSON.stringify(packageId(p))}, load: () => import(${
          JSON.stringify(packageSpecifier(p))
        }) },`
      ),
      "    ],",
    ]),
    "  }),",
    ");",
    "",
    ...(gatehouse.registry !== "npm" ? [] : [
      "// The npm packages the server loads when a config uses a feature: optional peer",
      "// dependencies of gatehouse's npm package, named here so that they are resolved and",
      "// locked with it. Each is loaded only when a feature uses it.",
      "export const serverPackages = () => [",
      ...serverPackages().map((p) => `  import(${JSON.stringify(p)}),`),
      "];",
      "",
    ]),
  ];
  return lines.join("\n");
}

/**
 * The `deno.json` of a generation: packages from the installation's cache (no node_modules),
 * a frozen lock file, and the dependency-age policy when one was chosen at install.
 *
 * @example
 * ```ts
 * import { generationConfig } from "./installation.ts";
 * JSON.parse(generationConfig("0")).minimumDependencyAge; // "0"
 * ```
 */
export function generationConfig(minimumDependencyAge?: string): string {
  const config: Record<string, unknown> = {
    nodeModulesDir: "none",
    lock: { path: "./deno.lock", frozen: true },
  };
  if (minimumDependencyAge !== undefined) config.minimumDependencyAge = minimumDependencyAge;
  return JSON.stringify(config, null, 2) + "\n";
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * The launcher `bin/gatehouse`: a POSIX shell script that runs the active generation with the
 * installation's cache, the Deno that installed it and, when one was set at install, the npm
 * registry (an `NPM_CONFIG_REGISTRY` in the environment still wins).
 *
 * @example
 * ```ts
 * import { launcherSource } from "./installation.ts";
 * launcherSource("/opt/gatehouse", "/usr/bin/deno").startsWith("#!/bin/sh"); // true
 * ```
 */
export function launcherSource(root: string, deno: string, registry?: string): string {
  const lines = [
    "#!/bin/sh",
    "# gatehouse, as installed in the directory below by `gatehouse install`.",
    "# `current` names the active generation under generations/; `gatehouse upgrade`,",
    "# `add-package` and `remove-package` build a new one and switch `current` atomically.",
    `root=${shellQuote(root)}`,
    'gen=$(cat "$root/current") || exit 1',
    'dir="$root/generations/$gen"',
    'DENO_DIR="$root/cache"',
    "DENO_NO_PACKAGE_JSON=1",
    "export DENO_DIR DENO_NO_PACKAGE_JSON",
    ...(registry
      ? [
        `NPM_CONFIG_REGISTRY="\${NPM_CONFIG_REGISTRY:-${registry.replace(/["$`\\]/g, "\\$&")}}"`,
        "export NPM_CONFIG_REGISTRY",
      ]
      : []),
    `exec ${shellQuote(deno)} run -A --config "$dir/deno.json" "$dir/main.ts" "$@"`,
    "",
  ];
  return lines.join("\n");
}

/**
 * One line describing an installation: `gatehouse v0.2.0 with npm:gatehouse-plugin-greet 1.0.0`.
 *
 * @example
 * ```ts
 * import { describeManifest } from "./installation.ts";
 * describeManifest({
 *   format: 1,
 *   gatehouse: { request: "npm:@gatehouse/gatehouse", package: "npm:@gatehouse/gatehouse", version: "0.2.0" },
 *   plugins: [],
 *   created: "2026-01-01T00:00:00.000Z",
 * }); // "gatehouse v0.2.0, no plugin packages"
 * ```
 */
export function describeManifest(manifest: InstallManifest): string {
  const plugins = manifest.plugins.map((p) => `${p.package} ${p.version}`);
  return `gatehouse v${manifest.gatehouse.version}, ` +
    (plugins.length ? `plugin packages: ${plugins.join(", ")}` : "no plugin packages");
}
