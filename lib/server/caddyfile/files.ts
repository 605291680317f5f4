/**
 * File access of the Gatehousefile parser (`import` of files and globs), injected so that
 * the parser can run without a file system (fuzzing, admin-API bodies with imports refused).
 *
 * @module
 */
import { goBase, goClean, goDir, goJoin } from "../net/path.ts";

/** What the parser needs from a file system. All paths are absolute. */
export interface FileSource {
  /** The current directory, to resolve the main file's relative imports. */
  cwd(): string;
  /** Kind of the entry at `path`, or undefined when it does not exist. */
  stat(path: string): "file" | "dir" | "other" | undefined;
  /** Names in a directory (unsorted), or undefined when it cannot be read. */
  readDir(path: string): string[] | undefined;
  /** The text of a file; throws with a reason when it cannot be read. */
  readTextFile(path: string): string;
}

/**
 * The local file system (Deno's synchronous API).
 *
 * @example
 * ```ts
 * import { localFiles } from "./files.ts";
 * localFiles.stat(localFiles.cwd()); // "dir"
 * ```
 */
export const localFiles: FileSource = {
  cwd: () => Deno.cwd(),
  stat(path) {
    try {
      const s = Deno.statSync(path);
      return s.isFile ? "file" : s.isDirectory ? "dir" : "other";
    } catch {
      return undefined;
    }
  },
  readDir(path) {
    try {
      return [...Deno.readDirSync(path)].map((e) => e.name);
    } catch {
      return undefined;
    }
  },
  readTextFile: (path) => Deno.readTextFileSync(path),
};

/**
 * A file source that refuses every file: `import` of a file fails with a clear error.
 *
 * @example
 * ```ts
 * import { noFiles } from "./files.ts";
 * noFiles.stat("/etc/passwd"); // undefined
 * ```
 */
export const noFiles: FileSource = {
  cwd: () => "/",
  stat: () => undefined,
  readDir: () => undefined,
  readTextFile(path) {
    throw new Error(`file access is not available here (${path})`);
  },
};

/** Absolute form of `path` (Caddy's `FastAbs`: clean, joined to the current directory). */
export function absPath(path: string, files: FileSource): string {
  return path.startsWith("/") ? goClean(path) : goJoin(files.cwd(), path);
}

/** True when a pattern has glob syntax (`*`, `?`, `[` or `\`), as Go's `filepath.Glob`. */
export function hasGlobMeta(pattern: string): boolean {
  return /[*?[\\]/.test(pattern);
}

/** Thrown for a malformed glob pattern. */
export class GlobPatternError extends Error {
  /** Creates the error. */
  constructor() {
    super("syntax error in pattern");
    this.name = "GlobPatternError";
  }
}

/**
 * Go's `filepath.Match`: `*` and `?` do not cross `/`; `[...]` classes; `\` escapes. False
 * for a malformed pattern.
 */
export function matchGlobElement(pattern: string, name: string): boolean {
  try {
    return compileElement(pattern).test(name);
  } catch {
    return false;
  }
}

function compileElement(pattern: string): RegExp {
  let re = "^";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else if (c === "\\") {
      if (i + 1 >= pattern.length) throw new GlobPatternError();
      re += escapeRe(pattern[++i]);
    } else if (c === "[") {
      const close = pattern.indexOf("]", i + 2);
      if (close < 0) throw new GlobPatternError();
      let body = pattern.slice(i + 1, close);
      let negate = false;
      if (body.startsWith("^")) {
        negate = true;
        body = body.slice(1);
      }
      if (body === "") throw new GlobPatternError();
      re += `[${negate ? "^" : ""}${body.replace(/[\]\\^]/g, "\\$&")}]`;
      i = close;
    } else re += escapeRe(c);
  }
  return new RegExp(re + "$", "u");
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Go's `filepath.Glob`: the sorted paths matching `pattern` (absolute). A pattern without
 * glob syntax matches itself when it exists. Throws {@linkcode GlobPatternError}.
 */
export function glob(pattern: string, files: FileSource): string[] {
  if (!hasGlobMeta(pattern)) return files.stat(pattern) !== undefined ? [pattern] : [];
  const dir = goDir(pattern);
  const base = goBase(pattern);
  compileElement(base); // validate before touching the disk
  const dirs = hasGlobMeta(dir) && dir !== pattern ? glob(dir, files) : [dir];
  const out: string[] = [];
  for (const d of dirs) {
    if (files.stat(d) !== "dir") continue;
    const names = (files.readDir(d) ?? []).sort();
    for (const n of names) if (matchGlobElement(base, n)) out.push(goJoin(d, n));
  }
  return out;
}
