/**
 * The package as JSR serves it (the React build, the Preact build, or any entry points), and a
 * Deno app on React 18 that imports it.
 *
 * `deno publish` uploads the source with every bare specifier replaced by its `deno.json`
 * import (`"react"` → `"npm:react@^19.0.0"`, `@ts-types="@types/react"` →
 * `"npm:@types/react@^19.0.0"`), so a Deno app gets the React build with React 19 pinned,
 * whatever React the app uses (and the Preact build with `npm:preact@^11.2.0`).
 * {@linkcode buildJsrForm} writes that form of entry points (`react.ts` unless told) and the
 * modules they load (read from `deno info`) to a directory, and checks that it needs no import
 * map any more (`deno info --no-config` resolves it). {@linkcode denoReact18Map} writes the
 * import map of a Deno app on React 18 (`tests/react/react18.importmap.json`) that imports it.
 */

const ROOT = new URL("../../../", import.meta.url);
const DENO_JSON = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))) as {
  imports: Record<string, string>;
};

/** The `deno.json` imports of the package: what JSR pins the React build's imports to. */
export const PUBLISHED_IMPORTS: Readonly<Record<string, string>> = DENO_JSON.imports;

interface Info {
  modules: {
    specifier: string;
    error?: string;
    dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
  }[];
}

async function denoInfo(args: string[]): Promise<Info> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", ...args],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (code !== 0) throw new Error(`deno info failed: ${new TextDecoder().decode(stderr)}`);
  return JSON.parse(new TextDecoder().decode(stdout));
}

const bare = (s: string) => !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(s);

/** Whether the import map has an entry for `specifier`. */
function mapped(specifier: string): boolean {
  return Object.hasOwn(PUBLISHED_IMPORTS, specifier) ||
    Object.keys(PUBLISHED_IMPORTS).some((k) => k.endsWith("/") && specifier.startsWith(k));
}

/** A bare specifier as `deno publish` writes it: its import, or its prefix import + the rest. */
function unfurl(specifier: string): string {
  const exact = PUBLISHED_IMPORTS[specifier];
  if (exact) return exact;
  const prefix = Object.keys(PUBLISHED_IMPORTS)
    .filter((k) => k.endsWith("/") && specifier.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  if (!prefix) throw new Error(`${specifier} is not in deno.json's imports`);
  return PUBLISHED_IMPORTS[prefix] + specifier.slice(prefix.length);
}

/** The files `deno publish` uploads (its dry run's list), relative to the project root. */
async function publishedFiles(): Promise<string[]> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty", "--no-check"],
    cwd: ROOT.pathname,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  if (code !== 0) throw new Error(`deno publish --dry-run failed: ${text}`);
  const files = [...text.matchAll(/^\s+(file:\/\/\S+) \(/gm)].map((m) => m[1]);
  if (files.length === 0) throw new Error(`no file list in deno publish --dry-run:\n${text}`);
  // The lock file and a worktree's .git file are uploaded too, but no module reads them.
  return files.map((f) => f.slice(ROOT.href.length)).filter((f) => f !== ".git");
}

/** A module's text with every bare specifier as `deno publish` writes it; comments untouched. */
function unfurlModule(text: string): string {
  return text.split("\n").map((line) =>
    /^\s*(\*|\/\*\*|\/\/(?! @ts-types=))/.test(line) ? line : line.replace(
      /(\bfrom |^import |@ts-types=|\bimport\()"([^"]+)"/g,
      // a bare string the import map lacks is no import (deno publish refuses those): code
      // that writes code, e.g.
      (all, before: string, s: string) => bare(s) && mapped(s) ? `${before}"${unfurl(s)}"` : all,
    )
  ).join("\n");
}

/**
 * Writes the package as JSR serves it under `dir`: every file `deno publish` uploads, each
 * module with its bare specifiers (static and dynamic imports, exports, `@ts-types`) replaced by
 * their `deno.json` imports. Checks that `entries` (files at the project root, `react.ts` unless
 * told) resolve with no config; returns the path of its `react.ts` and the npm packages
 * `entries` import (e.g. `npm:react@^19.0.0`). Entry `e` is at `${dir}/${e}`.
 */
export async function buildJsrForm(
  dir: string,
  entries: string[] = ["react.ts"],
): Promise<{ react: string; npm: string[] }> {
  for (const rel of await publishedFiles()) {
    const out = `${dir}/${rel}`;
    await Deno.mkdir(out.slice(0, out.lastIndexOf("/")), { recursive: true });
    if (/\.[mc]?[jt]sx?$/.test(rel)) {
      await Deno.writeTextFile(out, unfurlModule(await Deno.readTextFile(new URL(rel, ROOT))));
    } else {
      await Deno.copyFile(new URL(rel, ROOT), out);
    }
  }
  const npm = new Set<string>();
  for (const entry of entries) {
    const copy = await denoInfo(["--no-config", `${dir}/${entry}`]);
    const errors = copy.modules.filter((m) => m.error).map((m) => `${m.specifier}: ${m.error}`);
    if (errors.length) throw new Error(`the JSR form does not resolve:\n${errors.join("\n")}`);
    for (const m of copy.modules) {
      for (const d of m.dependencies ?? []) {
        for (const s of [d.code?.specifier, d.type?.specifier]) {
          if (s?.startsWith("npm:")) npm.add(s);
        }
      }
    }
  }
  return { react: `${dir}/react.ts`, npm: [...npm].sort() };
}

/**
 * Writes the import map of a Deno app on React 18 (`react18.importmap.json`, paths made
 * absolute) whose `@gatehouse/gatehouse/react` is the JSR form at `jsrReact`. With `remap`,
 * it also maps the JSR form's React imports to the app's React 18, as docs/react.md says.
 */
export async function denoReact18Map(
  file: string,
  jsrReact: string,
  remap: boolean,
): Promise<string> {
  const source = new URL("tests/react/react18.importmap.json", ROOT);
  const map = JSON.parse(await Deno.readTextFile(source)) as { imports: Record<string, string> };
  const imports: Record<string, string> = {};
  for (const [k, v] of Object.entries(map.imports)) {
    imports[k] = v.startsWith(".") ? new URL(v, source).href : v;
  }
  imports["@gatehouse/gatehouse/react"] = new URL(`file://${jsrReact}`).href;
  if (remap) {
    imports[PUBLISHED_IMPORTS["react"]] = map.imports["react"];
    imports[PUBLISHED_IMPORTS["@types/react"]] = map.imports["@types/react"];
  }
  await Deno.writeTextFile(file, JSON.stringify({ imports }, null, 2));
  return file;
}
