/**
 * Checks that every package installed in an npm tree runs on the oldest Node the tree's own
 * package declares: the lowest version `engines.node` of `package.json` allows must satisfy
 * each installed dependency's `engines.node` (direct or nested, scoped or not). A dependency
 * that asks for a newer Node makes `npm install` print an EBADENGINE warning on that Node and
 * may not run there; `scripts/build_npm.ts` fails the build on any such dependency.
 *
 * ```sh
 * deno run -A --config tests/deno.json scripts/npm_engines.ts npm/
 * ```
 *
 * @module
 */
import semver from "semver";

/** An installed package whose `engines.node` excludes the lowest Node the root allows. */
export interface EnginesConflict {
  /** The package name. */
  name: string;
  /** Its installed version. */
  version: string;
  /** Its `engines.node`. */
  requires: string;
  /** Where it is installed, relative to the checked directory. */
  path: string;
}

/** What {@link checkEngines} found. */
export interface EnginesReport {
  /** The root package's `engines.node`. */
  range: string;
  /** The lowest Node version that range allows. */
  lowest: string;
  /** How many installed packages were read. */
  packages: number;
  /** The packages that do not allow `lowest`. */
  conflicts: EnginesConflict[];
}

interface PackageJson {
  name?: string;
  version?: string;
  engines?: { node?: unknown };
}

async function readPackage(path: string): Promise<PackageJson | null> {
  try {
    return JSON.parse(await Deno.readTextFile(path)) as PackageJson;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw new Error(`${path}: cannot be read as JSON (${(e as Error).message})`);
  }
}

async function* dirs(path: string): AsyncGenerator<string> {
  try {
    for await (const e of Deno.readDir(path)) {
      if (e.isDirectory && !e.name.startsWith(".")) yield e.name;
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
}

/** The package directories of one `node_modules`, scoped ones included. */
async function* packagesIn(nodeModules: string): AsyncGenerator<string> {
  for await (const name of dirs(nodeModules)) {
    if (!name.startsWith("@")) {
      yield `${nodeModules}/${name}`;
      continue;
    }
    for await (const scoped of dirs(`${nodeModules}/${name}`)) {
      yield `${nodeModules}/${name}/${scoped}`;
    }
  }
}

/**
 * Reads `<dir>/package.json` `engines.node` and every package under `<dir>/node_modules`
 * (recursively), and lists those whose `engines.node` excludes the lowest version the root
 * allows. Throws when the root has no `engines.node` or it is not a valid range.
 *
 * @example
 * ```ts ignore
 * const report = await checkEngines("npm");
 * if (report.conflicts.length > 0) throw new Error(formatConflicts(report));
 * ```
 */
export async function checkEngines(dir: string): Promise<EnginesReport> {
  const root = await readPackage(`${dir}/package.json`);
  const range = root?.engines?.node;
  if (typeof range !== "string") {
    throw new Error(`${dir}/package.json: no engines.node to check the dependencies against`);
  }
  const lowest = semver.validRange(range) ? semver.minVersion(range)?.version : undefined;
  if (!lowest) {
    throw new Error(`${dir}/package.json: engines.node "${range}" is not a valid version range`);
  }
  const conflicts: EnginesConflict[] = [];
  let packages = 0;
  const visit = async (nodeModules: string): Promise<void> => {
    for await (const pkgDir of packagesIn(nodeModules)) {
      const pkg = await readPackage(`${pkgDir}/package.json`);
      if (!pkg) continue;
      packages++;
      const requires = pkg.engines?.node;
      if (typeof requires === "string" && requires.trim() !== "") {
        // An invalid range is not a promise about Node: npm ignores it too.
        if (semver.validRange(requires) && !semver.satisfies(lowest, requires)) {
          conflicts.push({
            name: pkg.name ??
              pkgDir.slice(pkgDir.lastIndexOf("node_modules/") + "node_modules/".length),
            version: pkg.version ?? "?",
            requires,
            path: pkgDir.slice(dir.length + 1),
          });
        }
      }
      await visit(`${pkgDir}/node_modules`);
    }
  };
  await visit(`${dir}/node_modules`);
  conflicts.sort((a, b) => a.path.localeCompare(b.path));
  return { range, lowest, packages, conflicts };
}

/** The conflicts of a report in words, one line per package, with what to do. */
export function formatConflicts(report: EnginesReport): string {
  return [
    `engines.node is "${report.range}", but ${report.conflicts.length} installed ` +
    `package(s) do not run on Node ${report.lowest}:`,
    ...report.conflicts.map((c) =>
      `  ${c.name}@${c.version} requires node ${c.requires} (${c.path})`
    ),
    "Use versions of these dependencies that support that Node, or raise the mirror's " +
    "engines.node (NODE_ENGINES in scripts/build_npm.ts) and the Node version the docs name.",
  ].join("\n");
}

if (import.meta.main) {
  const dir = (Deno.args[0] ?? "npm").replace(/\/$/, "");
  const report = await checkEngines(dir);
  if (report.conflicts.length > 0) {
    console.error(formatConflicts(report));
    Deno.exit(1);
  }
  console.log(
    `${dir}: ${report.packages} installed packages all run on Node ${report.lowest} ` +
      `(engines.node "${report.range}")`,
  );
}
