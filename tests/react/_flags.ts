/**
 * Deno flags that run a file with React `major`, from `react<major>.importmap.json` (React,
 * react-dom and their types at one version, Preact, and the package's entry points).
 * `--no-config` keeps the project's deno.json out: it maps `react` to 19 for every file under
 * it. Packages go to Deno's global cache, never to the project's node_modules or lock file,
 * so `deno task start` installs none of them.
 */
export function reactFlags(major: 18 | 19): string[] {
  const map = new URL(`react${major}.importmap.json`, import.meta.url).pathname;
  return ["--no-config", "--import-map", map];
}
