/**
 * Path helpers with Go's semantics, which Caddy's matchers and file server are defined by:
 * `cleanPath` (`path.Clean` keeping a trailing slash, optionally keeping `//`), `pathMatch`
 * (`path.Match` globs: `*`, `?`, `[a-z]`, `\` escapes; `*` does not cross `/`).
 *
 * @module
 */
import { goClean } from "../net/path.ts";

export { goClean };

/** Caddy's `cleanPath`: `path.Clean` but a trailing slash survives. */
function caddyClean(p: string): string {
  if (p === "") return "";
  let c = goClean(p);
  if (c !== "/" && p.endsWith("/")) c += "/";
  return c;
}

/**
 * Caddy's `CleanPath`: cleans a request path; with `collapseSlashes` false, runs of slashes
 * are kept (so a pattern with `//` can match them).
 *
 * @example
 * ```ts
 * import { cleanPath } from "./pathutil.ts";
 * cleanPath("/a//b/../c", false); // "/a//c"
 * ```
 */
export function cleanPath(p: string, collapseSlashes: boolean): string {
  if (collapseSlashes) return caddyClean(p);
  if (p.indexOf("//") < 0) return caddyClean(p);
  let s = "";
  for (let i = 0; i < p.length; i++) {
    if (p[i] === "/" && i > 0 && p[i - 1] === "/") s += "\uffff";
    s += p[i];
  }
  return caddyClean(s).replaceAll("\uffff", "");
}

function matchClass(pattern: string, i: number, ch: string): [boolean, number] | null {
  // pattern[i] === "["; returns [matched, index after "]"] or null on a bad pattern.
  let j = i + 1;
  let negate = false;
  if (pattern[j] === "^") {
    negate = true;
    j++;
  }
  let matched = false;
  let first = true;
  while (j < pattern.length && (first || pattern[j] !== "]")) {
    first = false;
    let lo = pattern[j];
    if (lo === "\\") lo = pattern[++j];
    if (lo === undefined) return null;
    j++;
    let hi = lo;
    if (pattern[j] === "-" && pattern[j + 1] !== "]" && j + 1 < pattern.length) {
      hi = pattern[j + 1];
      if (hi === "\\") hi = pattern[j + 2], j++;
      j += 2;
    }
    if (lo <= ch && ch <= hi) matched = true;
  }
  if (pattern[j] !== "]") return null;
  return [matched !== negate, j + 1];
}

/**
 * Go's `path.Match`: true when `name` matches the shell pattern. Malformed patterns match
 * nothing.
 *
 * @example
 * ```ts
 * import { pathMatch } from "./pathutil.ts";
 * pathMatch("/img/*.png", "/img/a.png"); // true
 * ```
 */
export function pathMatch(pattern: string, name: string): boolean {
  return matchFrom(pattern, 0, name, 0);
}

function matchFrom(p: string, pi: number, n: string, ni: number): boolean {
  while (pi < p.length) {
    const c = p[pi];
    if (c === "*") {
      while (p[pi] === "*") pi++;
      if (pi === p.length) return n.indexOf("/", ni) < 0;
      for (let k = ni; k <= n.length; k++) {
        if (matchFrom(p, pi, n, k)) return true;
        if (k < n.length && n[k] === "/") return false;
      }
      return false;
    }
    if (ni >= n.length) return false;
    if (c === "?") {
      if (n[ni] === "/") return false;
      pi++;
      ni++;
      continue;
    }
    if (c === "[") {
      if (n[ni] === "/") return false;
      const r = matchClass(p, pi, n[ni]);
      if (!r || !r[0]) return false;
      pi = r[1];
      ni++;
      continue;
    }
    if (c === "\\") {
      pi++;
      if (pi >= p.length) return false;
    }
    if (p[pi] !== n[ni]) return false;
    pi++;
    ni++;
  }
  return ni === n.length;
}
