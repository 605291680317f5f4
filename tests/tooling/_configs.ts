/**
 * The two Deno configs and their lock files, read for the tooling tests.
 *
 * `deno.json` (the root) is what `deno task start` and every published entry point use: its
 * `imports` hold the runtime npm packages only, because with `"nodeModulesDir": "auto"` Deno
 * installs every package of the config's imports and lock file, whatever the program imports.
 * `tests/deno.json` is the config of tests, benchmarks and scripts (`deno task test`, `check`,
 * `bench`, `build:npm` pass `--config tests/deno.json`): the root's imports, the same, plus the
 * packages only they need, with its own lock file and `tests/node_modules`.
 *
 * @module
 */

/** The project root, as a path ending in `/`. */
export const ROOT: string = new URL("../../", import.meta.url).pathname;

/**
 * npm packages that only tests, benchmarks or scripts use. None of them may appear in the root
 * config (`deno task start` would install them); they live in `tests/deno.json` only.
 */
export const TEST_ONLY: readonly string[] = [
  "miniflare",
  "playwright-core",
  "fast-check",
  "dns2",
  "typescript",
  "ajv",
  "@seriousme/openapi-schema-validator",
  "parse-prometheus-text-format",
  "semver",
  "@scalar/api-reference",
  "jsqr",
];

/** The parts of a Deno config these tests read. */
export interface DenoConfig {
  name?: string;
  exports?: Record<string, string>;
  nodeModulesDir?: string;
  unstable?: string[];
  tasks?: Record<string, string>;
  imports?: Record<string, string>;
  fmt?: Record<string, unknown>;
  lint?: Record<string, unknown>;
}

/** The parts of a Deno lock file (version 5) these tests read. */
export interface DenoLock {
  version: string;
  specifiers?: Record<string, string>;
  npm?: Record<
    string,
    { dependencies?: string[]; optionalDependencies?: string[] }
  >;
  workspace?: { dependencies?: string[] };
}

/** Reads a JSON file relative to the project root. */
export async function readRootJson<T>(path: string): Promise<T> {
  return JSON.parse(await Deno.readTextFile(`${ROOT}${path}`)) as T;
}

/** The package named by an import-map value `npm:name@range/path` or `npm:/name@range/`. */
export function npmName(value: string): string | null {
  const m = value.match(/^npm:\/?((?:@[^/@]+\/)?[^/@]+)/);
  return m ? m[1] : null;
}

/** The package name of a lock key or an installed folder: `@a/b@1.0.0_peer@2` → `@a/b`. */
export function lockKeyName(key: string): string {
  const at = key.indexOf("@", 1);
  return at < 0 ? key : key.slice(0, at);
}

/** `1.72.1_tailwindcss@4.3.5` → `1.72.1`: the version without the peer-dependency suffix. */
export function baseVersion(resolved: string): string {
  return resolved.split("_")[0];
}

/**
 * The lock keys of every package reachable from `roots` (lock keys) through `dependencies` and
 * `optionalDependencies`. A dependency is written as a full key (`name@version...`) or, when
 * the lock holds one version of it, as the bare name.
 */
export function lockClosure(
  lock: DenoLock,
  roots: Iterable<string>,
): Set<string> {
  const npm = lock.npm ?? {};
  const byName = new Map<string, string[]>();
  for (const key of Object.keys(npm)) {
    const name = lockKeyName(key);
    byName.set(name, [...(byName.get(name) ?? []), key]);
  }
  const resolve = (dep: string): string[] => npm[dep] ? [dep] : (byName.get(dep) ?? []);
  const seen = new Set<string>();
  const stack = [...roots].flatMap(resolve);
  while (stack.length > 0) {
    const key = stack.pop()!;
    if (seen.has(key)) continue;
    seen.add(key);
    const entry = npm[key] ?? {};
    for (
      const dep of [
        ...(entry.dependencies ?? []),
        ...(entry.optionalDependencies ?? []),
      ]
    ) {
      stack.push(...resolve(dep));
    }
  }
  return seen;
}

/**
 * The versions (without peer suffixes) the lock resolves each of `names` to, read from the
 * lock's `specifiers` (whose keys Deno normalises, so they are matched by package name).
 */
export function lockedVersions(
  lock: DenoLock,
  names: Iterable<string>,
): Map<string, string[]> {
  const wanted = new Set(names);
  const out = new Map<string, Set<string>>();
  for (const [specifier, resolved] of Object.entries(lock.specifiers ?? {})) {
    const name = npmName(specifier);
    if (!name || !wanted.has(name)) continue;
    out.set(name, (out.get(name) ?? new Set()).add(baseVersion(resolved)));
  }
  return new Map(
    [...out].map(([name, versions]) => [name, [...versions].sort()]),
  );
}
