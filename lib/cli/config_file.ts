/**
 * Reading a config file for `run`, `start`, `reload`, `validate`, `adapt`, `stop`: picks the
 * adapter (flag, then file name: `Gatehousefile`, `Caddyfile`, `*.gatehousefile`,
 * `*.caddyfile` → `gatehousefile`; `*.json5` → `json5`; otherwise native JSON) and adapts.
 * It registers the adapters only; a command that provisions the config imports the standard
 * modules (`lib/server/standard.ts`) itself.
 *
 * @module
 */
import "../server/adapters/register.ts";
import { getAdapter } from "../server/adapter.ts";
import type { AdapterWarning } from "../server/adapter.ts";
import { UsageError } from "./usage_error.ts";
import { jsonErrorMessage } from "../server/errors.ts";

/** Default text config file names looked for in the current directory. */
export const DEFAULT_CONFIG_FILES: readonly string[] = ["Gatehousefile", "Caddyfile"];

/** A config read from a file (or stdin) and adapted. */
export interface LoadedConfig {
  /** Native JSON config (null when the file is empty). */
  config: unknown;
  /** Adapter warnings. */
  warnings: AdapterWarning[];
  /** Where it came from (`-` for stdin). */
  source: string;
  /** The text that was read (what `--watch` compares the file with). */
  text: string;
}

function adapterFor(path: string, adapter?: string): string | undefined {
  if (adapter) return adapter;
  const base = path.split("/").pop() ?? path;
  if (/^(gatehousefile|caddyfile)/i.test(base) || /\.(gatehousefile|caddyfile)$/i.test(base)) {
    return "gatehousefile";
  }
  if (base.endsWith(".json5")) return "json5";
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** Finds the default text config in the current directory, if any. */
export async function findDefaultConfig(): Promise<string | undefined> {
  return (await defaultConfigFiles())[0];
}

/**
 * The default text configs present in the current directory, in the order they are taken
 * (`Gatehousefile` before `Caddyfile`): the first is the one loaded.
 */
export async function defaultConfigFiles(): Promise<string[]> {
  const found: string[] = [];
  for (const name of DEFAULT_CONFIG_FILES) if (await exists(name)) found.push(name);
  return found;
}

/** Reads and adapts a config file; `-` reads stdin. Throws UsageError on any problem. */
export async function readConfigFile(path: string, adapter?: string): Promise<LoadedConfig> {
  let text: string;
  try {
    text = path === "-"
      ? await new Response(Deno.stdin.readable).text()
      : await Deno.readTextFile(path);
  } catch (e) {
    throw new UsageError(`reading config file ${path}: ${(e as Error).message}`);
  }
  const name = adapterFor(path, adapter);
  if (!name || name === "json") {
    if (text.trim() === "") return { config: null, warnings: [], source: path, text };
    try {
      return { config: JSON.parse(text), warnings: [], source: path, text };
    } catch (e) {
      throw new UsageError(`${path}: decoding JSON config: ${jsonErrorMessage(e)}`);
    }
  }
  const a = getAdapter(name);
  if (!a) throw new UsageError(`unrecognized config adapter: ${name}`);
  try {
    const r = await a.adapt(text, { filename: path });
    return { config: r.result, warnings: r.warnings, source: path, text };
  } catch (e) {
    throw new UsageError(`adapting config using ${name}: ${(e as Error).message}`);
  }
}

/** Prints adapter warnings to stderr. */
export function printWarnings(warnings: AdapterWarning[]): void {
  for (const w of warnings) {
    const where = [w.file, w.line].filter((x) => x !== undefined).join(":");
    console.error(
      `[WARNING]${where ? ` ${where}` : ""}${w.directive ? ` (${w.directive})` : ""}: ${w.message}`,
    );
  }
}
