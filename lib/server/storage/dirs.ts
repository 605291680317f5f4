/**
 * Where the server keeps its files.
 *
 * - Data (certificates, locks, app state; the default `caddy.storage.file_system` root):
 *   `$XDG_DATA_HOME/gatehouse`, else `$HOME/.local/share/gatehouse`, else `./gatehouse/data`.
 * - Config (the autosaved config `autosave.json` read by `run --resume`):
 *   `$XDG_CONFIG_HOME/gatehouse`, else `$HOME/.config/gatehouse`, else `./gatehouse/config`.
 *
 * @module
 */

function env(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The data directory.
 *
 * @example
 * ```ts
 * import { dataDir } from "./dirs.ts";
 * console.log(dataDir());
 * ```
 */
export function dataDir(): string {
  const xdg = env("XDG_DATA_HOME");
  if (xdg) return `${xdg}/gatehouse`;
  const home = env("HOME");
  return home ? `${home}/.local/share/gatehouse` : "./gatehouse/data";
}

/**
 * The config directory.
 *
 * @example
 * ```ts
 * import { configDir } from "./dirs.ts";
 * console.log(configDir());
 * ```
 */
export function configDir(): string {
  const xdg = env("XDG_CONFIG_HOME");
  if (xdg) return `${xdg}/gatehouse`;
  const home = env("HOME");
  return home ? `${home}/.config/gatehouse` : "./gatehouse/config";
}

/**
 * The autosave file `run --resume` loads.
 *
 * @example
 * ```ts
 * import { autosavePath } from "./dirs.ts";
 * console.log(autosavePath());
 * ```
 */
export function autosavePath(): string {
  return `${configDir()}/autosave.json`;
}
