/**
 * `file` matcher (Caddy's `http.matchers.file`): matches when a file exists. `try_files`
 * (default: the request path) are tried under `root` (default `{http.vars.root}`, else the
 * working directory) after placeholders are replaced (their values glob-escaped) and globs
 * expanded; a path ending in `/` must be a directory, any other must not. `try_policy`:
 * `first_exist` (default), `first_exist_fallback` (the last entry is taken without the
 * file/directory check), `smallest_size`, `largest_size`, `most_recently_modified`. An entry
 * `=<status>` fails the request with that status when reached. `split_path` cuts the path
 * after the first delimiter that ends a path segment (`.php` in `/index.php/a/b`); the rest
 * is the remainder. A match sets `{http.matchers.file.relative}`, `.absolute`, `.type`
 * (`file` or `directory`) and `.remainder`. Only the local file system is available: `fs`
 * may be absent or `{http.vars.fs}` with no other file system configured.
 *
 * @module
 */
import { existsSync } from "node:fs";
import type { ModuleDefinition } from "../../module/mod.ts";
import { Decoder } from "../../config/decode.ts";
import type { RequestContext } from "../context.ts";
import { HandlerError, withoutStacks } from "../errors.ts";
import type { RequestMatcher } from "../handler.ts";
import { glob, globEscape, hasGlobMeta } from "../glob.ts";
import { sanitizedPathJoin } from "../handlers/file_server/sanitize.ts";
import { goClean } from "../pathutil.ts";
import { compileTemplate, type Template } from "../replacer.ts";

/** The try policies. */
export const TRY_POLICIES = [
  "first_exist",
  "first_exist_fallback",
  "smallest_size",
  "largest_size",
  "most_recently_modified",
] as const;

/** A try policy (`try_policy`). */
export type TryPolicy = typeof TRY_POLICIES[number];

/**
 * `http.matchers.file` (Caddy's `MatchFile`, `modules/caddyhttp/fileserver/matcher.go`): the
 * request matches when one of the files to try exists.
 */
export type FileMatcherConfig = {
  /** The file system: only the local disk (absent, `""` or `{http.vars.fs}`) is available. */
  fs?: string;
  /** The folder the files are tried under (placeholders allowed); `{http.vars.root}`, else `.`. */
  root?: string;
  /**
   * The files to try (default: the request path), with placeholders (their values
   * glob-escaped) and globs; one ending in `/` must be a directory, any other a file; `=<code>`
   * fails the request with that status when it is reached.
   */
  try_files?: string[];
  /** How one is chosen; `first_exist` when absent or empty. */
  try_policy?: TryPolicy;
  /**
   * Delimiters that end the file's path (`.php` in `/index.php/a/b`), matched
   * case-insensitively at the end of a segment; what follows is `{http.matchers.file.remainder}`.
   */
  split_path?: string[];
};

/** The fields of {@linkcode FileMatcherConfig}. */
export const FILE_MATCHER_FIELDS: readonly (keyof FileMatcherConfig)[] = [
  "fs",
  "root",
  "try_files",
  "try_policy",
  "split_path",
];

/**
 * Decodes a `file` matcher (known fields and policy, a file system that is available).
 *
 * @example
 * ```ts
 * import { decodeFileMatcher } from "./file.ts";
 * decodeFileMatcher({ try_files: ["{path}", "/index.php"] }).try_files?.length; // 2
 * ```
 */
export function decodeFileMatcher(raw: unknown): FileMatcherConfig {
  const d = Decoder.of(raw, "http.matchers.file").fields(FILE_MATCHER_FIELDS);
  const out: FileMatcherConfig = {};
  const fs = d.string("fs");
  if (fs !== undefined && fs !== "" && fs !== "{http.vars.fs}") {
    d.failAt("fs", `file system ${JSON.stringify(fs)} is not available (only the local disk)`);
  }
  if (fs !== undefined) out.fs = fs;
  const policy = d.string("try_policy");
  if (policy && !TRY_POLICIES.includes(policy as TryPolicy)) {
    d.fail(`unknown try policy ${policy}`);
  }
  if (policy) out.try_policy = policy as TryPolicy;
  const splits = d.strings("split_path");
  if (splits !== undefined) out.split_path = splits;
  const root = d.string("root");
  if (root !== undefined) out.root = root;
  const tryFiles = d.strings("try_files");
  if (tryFiles !== undefined) out.try_files = tryFiles;
  return out;
}

/** One path to try, with what its placeholders will be set to. */
interface Candidate {
  full: string;
  relative: string;
  remainder: string;
  /** True when a glob listed it (it exists); false when it is one path, not looked at yet. */
  listed: boolean;
}

/** A try_files entry: a template, or an error status. */
type TryEntry = { status: number } | { template: Template; dirOnly: boolean };

/** Caddy's case-insensitive search (a match ending exactly at the end is not taken). */
function indexFold(haystack: string, needle: string): number {
  const h = haystack.toLowerCase();
  const n = needle.toLowerCase();
  for (let i = 0; i + n.length < h.length; i++) if (h.startsWith(n, i)) return i;
  return -1;
}

/**
 * Stats a path, null when it is not there. A missing path is ruled out by `existsSync`
 * first: a failed `Deno.statSync` throws, which costs several times a successful stat, and a
 * single-page app's routes miss on every request.
 */
function statOf(path: string): Deno.FileInfo | null {
  if (!existsSync(path)) return null;
  try {
    return withoutStacks(() => Deno.statSync(path));
  } catch {
    return null;
  }
}

/**
 * Builds a `file` matcher from its JSON (decoded, then built).
 *
 * @example
 * ```ts
 * import { fileMatcher } from "./file.ts";
 * fileMatcher({ try_files: ["{path}", "/index.html"] });
 * ```
 */
export function fileMatcher(raw: unknown): RequestMatcher {
  return fileMatcherOf(decodeFileMatcher(raw));
}

/** Builds a `file` matcher from its decoded config. */
export function fileMatcherOf(config: FileMatcherConfig): RequestMatcher {
  const policy: TryPolicy = config.try_policy || "first_exist";
  const splits = config.split_path ?? [];
  const rootT = compileTemplate(config.root || "{http.vars.root}", { empty: "." });
  const entries: TryEntry[] = (config.try_files ?? ["{http.request.uri.path}"]).map((f) => {
    const code = /^=(\d+)$/.exec(f);
    if (code && Number(code[1]) >= 100 && Number(code[1]) <= 999) {
      return { status: Number(code[1]) };
    }
    return { template: compileTemplate(f, { escape: globEscape }), dirOnly: f.endsWith("/") };
  });

  function firstSplit(path: string): [string, string] {
    for (const split of splits) {
      const idx = indexFold(path, split);
      if (idx < 0) continue;
      const pos = idx + split.length;
      if (pos !== path.length && path[pos] !== "/") continue;
      return [path.slice(0, pos), path.slice(pos)];
    }
    return [path, ""];
  }

  function candidates(
    c: RequestContext,
    entry: { template: Template; dirOnly: boolean },
    root: string,
  ): Candidate[] {
    let [before, remainder] = firstSplit(goClean(entry.template.render(c)));
    if (entry.dirOnly) before += "/";
    const full = sanitizedPathJoin(root, before);
    if (full === null) return [];
    const relative = (p: string) => p.startsWith(root) ? p.slice(root.length) : p;
    // one path: its single stat (below) tells whether it exists, as Go's glob would
    if (!hasGlobMeta(full)) return [{ full, relative: relative(full), remainder, listed: false }];
    return glob(full).map((p) => ({ full: p, relative: relative(p), remainder, listed: true }));
  }

  function found(c: RequestContext, cand: Candidate, isDir: boolean): true {
    c.setPlaceholder("http.matchers.file.relative", cand.relative);
    c.setPlaceholder("http.matchers.file.absolute", cand.full);
    c.setPlaceholder("http.matchers.file.remainder", cand.remainder);
    c.setPlaceholder("http.matchers.file.type", isDir ? "directory" : "file");
    return true;
  }

  /** The candidate a size/time policy picks, or false. */
  function best(
    c: RequestContext,
    root: string,
    better: (info: Deno.FileInfo, bestSoFar: Deno.FileInfo | null) => boolean,
  ): boolean {
    let chosen: Candidate | null = null;
    let chosenInfo: Deno.FileInfo | null = null;
    for (const e of entries) {
      if ("status" in e) continue;
      for (const cand of candidates(c, e, root)) {
        const info = statOf(cand.full);
        if (info && better(info, chosenInfo)) {
          chosen = cand;
          chosenInfo = info;
        }
      }
    }
    return chosen !== null && found(c, chosen, chosenInfo!.isDirectory);
  }

  return {
    match(c) {
      const root = goClean(rootT.render(c));
      switch (policy) {
        case "first_exist":
        case "first_exist_fallback": {
          const last = policy === "first_exist_fallback" ? entries.length - 1 : -1;
          for (let i = 0; i < entries.length; i++) {
            const e = entries[i];
            if ("status" in e) {
              throw new HandlerError(e.status, String(e.status), "file matcher");
            }
            for (const cand of candidates(c, e, root)) {
              const info = statOf(cand.full);
              if (i === last && (info || cand.listed)) return found(c, cand, false);
              if (!info) continue;
              // a path ending in "/" must be a directory, any other must not be one
              if (info.isDirectory === cand.full.endsWith("/")) {
                return found(c, cand, info.isDirectory);
              }
            }
          }
          return false;
        }
        case "largest_size":
          return best(c, root, (info, b) => info.size > (b?.size ?? 0));
        case "smallest_size":
          return best(c, root, (info, b) => b === null || b.size === 0 || info.size < b.size);
        case "most_recently_modified":
          return best(
            c,
            root,
            (info, b) => b === null || (info.mtime?.getTime() ?? 0) > (b.mtime?.getTime() ?? 0),
          );
      }
    },
  };
}

/** Registry entry. */
export const fileMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.file",
  create: (config) => fileMatcherOf(decodeFileMatcher(config)),
};
