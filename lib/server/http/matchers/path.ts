/**
 * `path` matcher: case-insensitive match of the cleaned, decoded request path against
 * patterns: exact (`/a`), prefix (`/api/*`), suffix (`*.php`), substring (`*admin*`) or a glob
 * (`/img/*.png`). A pattern with `%` is matched against the escaped path, where `%2F` in the
 * pattern means a literal encoded slash and `%*` a wildcard over raw (still escaped) text.
 * Patterns without `//` merge slashes in the request path first.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import type { RequestContext } from "../context.ts";
import { decodePath } from "../context.ts";
import type { RequestMatcher } from "../handler.ts";
import { cleanPath, pathMatch } from "../pathutil.ts";
import { compileTemplate, hasPlaceholder } from "../replacer.ts";
import { stringList } from "./values.ts";

/**
 * `http.matchers.path` (Caddy's `MatchPath`, `modules/caddyhttp/matchers.go`): the patterns
 * the request's path may match, case-insensitively, after it is cleaned and decoded. A pattern
 * is exact (`/a`), a prefix (`/api/*`), a suffix (`*.php`), a substring (`*admin*`) or a glob
 * (`/img/*.png`); `*` alone matches every path. Escapes in a pattern (`/a%2Fb`) are compared
 * with the escaped path for those bytes, and `%*` is a wildcard over escaped text. Patterns
 * may hold placeholders.
 */
export type PathMatcherConfig = string[];

/**
 * Decodes a `path` matcher: an array of strings.
 *
 * @example
 * ```ts
 * import { decodePathMatcher } from "./path.ts";
 * decodePathMatcher(["/api/*"]); // ["/api/*"]
 * ```
 */
export function decodePathMatcher(raw: unknown): PathMatcherConfig {
  return stringList(raw, "http.matchers.path");
}

type Check = (c: RequestContext, lowerPath: string) => boolean;

function trimDotsSpaces(p: string): string {
  let end = p.length;
  while (end > 0 && (p[end - 1] === "." || p[end - 1] === " ")) end--;
  return end === p.length ? p : p.slice(0, end);
}

function matchEscaped(escapedPath: string, pattern: string): boolean {
  let sb = "";
  let ip = 0;
  let ix = 0;
  while (ip < pattern.length && ix < escapedPath.length) {
    let pathCh = escapedPath[ix];
    let escapedCh = "";
    if (pathCh === "%" && escapedPath.length >= ix + 3) {
      escapedCh = escapedPath.slice(ix, ix + 3).toLowerCase();
      const d = decodePath(escapedCh);
      if (d === null) return false;
      pathCh = d;
      ix += 2;
    }
    let normalize = true;
    const pc = pattern[ip];
    let star = pc === "*";
    if (pc === "%") {
      if (pattern.length >= ip + 3 && pattern[ip + 1] !== "*") {
        sb += escapedCh;
        ix++;
        ip += 3;
        continue;
      }
      ip++;
      normalize = false;
      star = true;
    }
    if (star) {
      const remaining = escapedPath.slice(ix);
      let until = escapedPath.length - ix;
      if (ip < pattern.length - 1) {
        until = remaining.indexOf(pattern[ip + 1]);
        if (until === -1) return false;
      }
      if (until !== 0) {
        let next = remaining.slice(0, until);
        if (normalize) {
          const d = decodePath(next);
          if (d === null) return false;
          next = d;
        }
        sb += next;
        ix += until;
      }
    } else {
      sb += pathCh;
      ix++;
    }
    ip++;
  }
  return pathMatch(pattern.replaceAll("%*", "*"), sb);
}

function compile(pattern: string): Check {
  if (pattern === "*") return () => true;
  const merge = !pattern.includes("//");
  if (pattern.includes("%")) {
    return (c) => matchEscaped(cleanPath(c.rawPath, merge), pattern);
  }
  const stars = pattern.split("*").length - 1;
  const clean = (p: string) => cleanPath(p, merge);
  if (stars === 2 && pattern.startsWith("*") && pattern.endsWith("*")) {
    const mid = pattern.slice(1, -1);
    return (_c, p) => clean(p).includes(mid);
  }
  if (stars === 1 && pattern.startsWith("*")) {
    const suffix = pattern.slice(1);
    return (_c, p) => clean(p).endsWith(suffix);
  }
  if (stars === 1 && pattern.endsWith("*")) {
    const prefix = pattern.slice(0, -1);
    // Fast path: a clean path needs no cleaning.
    return (_c, p) =>
      (p.indexOf("//") < 0 && p.indexOf("/.") < 0 ? p : clean(p)).startsWith(prefix);
  }
  if (stars === 0 && !/[?[\\]/.test(pattern)) {
    return (_c, p) => (p.indexOf("//") < 0 && p.indexOf("/.") < 0 ? p : clean(p)) === pattern;
  }
  return (_c, p) => pathMatch(pattern, clean(p));
}

/** Builds a path matcher from its decoded config. */
export function pathMatcher(config: PathMatcherConfig): RequestMatcher {
  const checks: Check[] = config.map((p) => {
    const lower = p.toLowerCase();
    if (!hasPlaceholder(lower)) return compile(lower);
    const t = compileTemplate(lower);
    return (c, path) => compile(t.render(c).toLowerCase())(c, path);
  });
  if (config.includes("*")) return { match: () => true };
  return {
    match(c: RequestContext): boolean {
      const p = trimDotsSpaces(c.path.toLowerCase());
      for (let i = 0; i < checks.length; i++) if (checks[i](c, p)) return true;
      return false;
    },
  };
}

/** Registry entry. */
export const pathMatcherModule: ModuleDefinition<RequestMatcher> = {
  id: "http.matchers.path",
  create: (raw) => pathMatcher(decodePathMatcher(raw)),
};
