/**
 * The React build as JSR serves it, and a Deno app on React 18 that imports it.
 *
 * `deno publish` uploads the source with every bare specifier replaced by its `deno.json`
 * import (`"react"` → `"npm:react@^19.0.0"`, `@ts-types="@types/react"` →
 * `"npm:@types/react@^19.0.0"`), so a Deno app gets the React build with React 19 pinned,
 * whatever React the app uses. {@linkcode buildJsrForm} writes that form of `react.ts` and the
 * modules it loads (read from `deno info`) to a directory, and checks that it needs no import
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

/**
 * Writes the JSR form of `react.ts` and its local modules under `dir`; returns the path of its
 * `react.ts` and the npm packages it imports (e.g. `npm:react@^19.0.0`).
 */
export async function buildJsrForm(dir: string): Promise<{ react: string; npm: string[] }> {
  const info = await denoInfo(["--config", new URL("deno.json", ROOT).pathname, "react.ts"]);
  const root = ROOT.href;
  const files = info.modules.filter((m) => m.specifier.startsWith(root));
  for (const m of files) {
    const rel = m.specifier.slice(root.length);
    let text = await Deno.readTextFile(new URL(rel, ROOT));
    // the specifiers of import and export declarations and of @ts-types; never doc comments
    text = text.split("\n").map((line) =>
      /^\s*(import\b|export\b|\}|\/\/ @ts-types=)/.test(line)
        ? line.replace(
          /(\bfrom |^import |@ts-types=)"([^"]+)"/g,
          (all, before: string, s: string) => bare(s) ? `${before}"${unfurl(s)}"` : all,
        )
        : line
    ).join("\n");
    const out = `${dir}/${rel}`;
    await Deno.mkdir(out.slice(0, out.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(out, text);
  }
  const react = `${dir}/react.ts`;
  const copy = await denoInfo(["--no-config", react]);
  const errors = copy.modules.filter((m) => m.error).map((m) => `${m.specifier}: ${m.error}`);
  if (errors.length) throw new Error(`the JSR form does not resolve:\n${errors.join("\n")}`);
  const npm = new Set<string>();
  for (const m of copy.modules) {
    for (const d of m.dependencies ?? []) {
      for (const s of [d.code?.specifier, d.type?.specifier]) if (s?.startsWith("npm:")) npm.add(s);
    }
  }
  return { react, npm: [...npm].sort() };
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
