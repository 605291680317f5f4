/**
 * File globs with Go's `filepath.Glob` semantics, which Caddy's `file` matcher expands its
 * candidates with: a pattern without meta characters (`*`, `?`, `[`, `\`) yields itself when
 * the path exists (symlinks not followed) and nothing otherwise; a pattern with them is
 * matched segment by segment against directory listings (sorted), `*` never crossing `/`.
 *
 * @module
 */
import { withoutStacks } from "./errors.ts";
import { pathMatch } from "./pathutil.ts";

const META = /[*?[\\]/;

/**
 * Escapes glob meta characters so a placeholder's value is matched literally.
 *
 * @example
 * ```ts
 * import { globEscape } from "./glob.ts";
 * globEscape("/a*b"); // "/a\\*b"
 * ```
 */
export function globEscape(s: string): string {
  return META.test(s) ? s.replace(/[*?[\]\\]/g, (m) => "\\" + m) : s;
}

/** True when the pattern has glob meta characters. */
export function hasGlobMeta(pattern: string): boolean {
  return META.test(pattern);
}

function exists(path: string): boolean {
  try {
    withoutStacks(() => Deno.lstatSync(path));
    return true;
  } catch {
    return false;
  }
}

function splitDir(pattern: string): [string, string] {
  const i = pattern.lastIndexOf("/");
  return i < 0 ? ["", pattern] : [pattern.slice(0, i + 1), pattern.slice(i + 1)];
}

function cleanGlobDir(dir: string): string {
  if (dir === "") return ".";
  if (dir === "/") return "/";
  return dir.slice(0, -1);
}

function join(dir: string, name: string): string {
  if (dir === ".") return name;
  return dir.endsWith("/") ? dir + name : `${dir}/${name}`;
}

function listMatching(dir: string, pattern: string, out: string[]): void {
  let names: string[];
  try {
    if (!withoutStacks(() => Deno.statSync(dir)).isDirectory) return;
    names = [...withoutStacks(() => Deno.readDirSync(dir))].map((e) => e.name).sort();
  } catch {
    return;
  }
  for (const name of names) if (pathMatch(pattern, name)) out.push(join(dir, name));
}

/**
 * Expands a glob into the existing paths it names, in sorted order.
 *
 * @example
 * ```ts
 * import { glob } from "./glob.ts";
 * glob("/etc/host*");
 * ```
 */
export function glob(pattern: string): string[] {
  if (!hasGlobMeta(pattern)) return exists(pattern) ? [pattern] : [];
  const [dirPart, file] = splitDir(pattern);
  const dir = cleanGlobDir(dirPart);
  const out: string[] = [];
  if (!hasGlobMeta(dir)) {
    listMatching(dir, file, out);
    return out;
  }
  for (const d of glob(dir)) listMatching(d, file, out);
  return out;
}
