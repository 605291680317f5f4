/**
 * Slash-separated paths with Go's `path` package semantics (what Caddy's file names, imports
 * and request paths follow): `goClean`, `goJoin`, `goDir`, `goBase`. Pure string functions:
 * no `node:path`, whose import costs a server a few MiB at start.
 *
 * @module
 */

/**
 * Go's `path.Clean`: resolves `.` and `..`, merges slashes; rooted paths never go above `/`.
 *
 * @example
 * ```ts
 * import { goClean } from "./path.ts";
 * goClean("/a/../../b//c/"); // "/b/c"
 * ```
 */
export function goClean(p: string): string {
  if (p === "") return ".";
  // Fast path: an absolute path with no empty, "." or ".." segments and no trailing slash.
  if (
    p.charCodeAt(0) === 47 && p.indexOf("//") < 0 && p.indexOf("/.") < 0 &&
    (p.length === 1 || p.charCodeAt(p.length - 1) !== 47)
  ) return p;
  const rooted = p[0] === "/";
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length && out[out.length - 1] !== "..") out.pop();
      else if (!rooted) out.push("..");
      continue;
    }
    out.push(seg);
  }
  const joined = out.join("/");
  if (rooted) return "/" + joined;
  return joined === "" ? "." : joined;
}

/**
 * Go's `path.Join`: the non-empty elements joined with `/` and cleaned; "" when all are empty.
 *
 * @example
 * ```ts
 * import { goJoin } from "./path.ts";
 * goJoin("/etc/gatehouse", "../sites", "a.conf"); // "/etc/sites/a.conf"
 * ```
 */
export function goJoin(...elems: string[]): string {
  const parts = elems.filter((e) => e !== "");
  return parts.length ? goClean(parts.join("/")) : "";
}

/**
 * Go's `path.Dir`: everything before the last slash, cleaned ("." when there is none).
 *
 * @example
 * ```ts
 * import { goDir } from "./path.ts";
 * goDir("/etc/gatehouse/Gatehousefile"); // "/etc/gatehouse"
 * ```
 */
export function goDir(p: string): string {
  return goClean(p.slice(0, p.lastIndexOf("/") + 1));
}

/**
 * Go's `path.Base`: the last element, trailing slashes removed ("." for "", "/" for slashes
 * only).
 *
 * @example
 * ```ts
 * import { goBase } from "./path.ts";
 * goBase("/etc/gatehouse/sites/"); // "sites"
 * ```
 */
export function goBase(p: string): string {
  if (p === "") return ".";
  const trimmed = p.replace(/\/+$/, "");
  if (trimmed === "") return "/";
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}
