/**
 * Mapping request paths to files without ever leaving the root: the decoded path is cleaned
 * as an absolute path (so `..`, `%2e%2e` and the like cannot climb), NUL bytes are refused,
 * and the real path of what is served (symlinks resolved) must stay inside the real root.
 *
 * @module
 */
import { goClean, pathMatch } from "../../pathutil.ts";

/**
 * Joins root and a request path like Caddy's `SanitizedPathJoin`: the path is cleaned as if
 * absolute, a trailing slash is kept (except for the root path `/`). Returns null for paths
 * with NUL bytes.
 *
 * @example
 * ```ts
 * import { sanitizedPathJoin } from "./sanitize.ts";
 * sanitizedPathJoin("/srv", "/../etc/passwd"); // "/srv/etc/passwd"
 * ```
 */
export function sanitizedPathJoin(root: string, reqPath: string): string | null {
  if (reqPath.includes("\0") || root.includes("\0")) return null;
  const r = root === "" ? "." : root;
  let joined = goClean(r + "/" + goClean("/" + reqPath).slice(1));
  // the root path itself ("/") gets no trailing slash, as in Caddy
  if (reqPath.endsWith("/") && reqPath.length > 1 && !joined.endsWith("/")) joined += "/";
  return joined;
}

/** True when `filename` is hidden by one of the `hide` patterns (names or paths, globs). */
export function fileHidden(filename: string, hide: readonly string[]): boolean {
  if (hide.length === 0) return false;
  const clean = goClean(filename);
  const parts = clean.split("/");
  for (const h of hide) {
    if (!h.includes("/")) {
      for (const p of parts) if (p && (p === h || pathMatch(h, p))) return true;
    } else {
      const hc = goClean(h);
      if (clean === hc || clean.startsWith(hc.endsWith("/") ? hc : hc + "/")) return true;
      if (pathMatch(hc, clean)) return true;
    }
  }
  return false;
}

/**
 * True for a dotfile name (`.git`, `.env`, `.htpasswd`...), except `.well-known` (RFC 8615:
 * ACME challenges, security.txt and the like live there).
 *
 * @example
 * ```ts
 * import { isDotName } from "./sanitize.ts";
 * isDotName(".env"); // true
 * isDotName(".well-known"); // false
 * ```
 */
export function isDotName(name: string): boolean {
  return name.charCodeAt(0) === 46 /* . */ && name !== ".well-known";
}

/**
 * True when a request path (decoded) has a dotfile segment once cleaned: `/.git/config`,
 * `/a/.env`, `/x/../.env`.
 *
 * @example
 * ```ts
 * import { hasDotSegment } from "./sanitize.ts";
 * hasDotSegment("/a/../.git/HEAD"); // true
 * hasDotSegment("/.well-known/security.txt"); // false
 * ```
 */
export function hasDotSegment(path: string): boolean {
  if (path.indexOf("/.") < 0 && path.charCodeAt(0) !== 46) return false;
  for (const part of goClean("/" + path).split("/")) if (part && isDotName(part)) return true;
  return false;
}

/** True when `real` is `root` or inside it (both real, absolute paths). */
export function insideRoot(real: string, realRoot: string): boolean {
  if (real === realRoot) return true;
  const base = realRoot.endsWith("/") ? realRoot : realRoot + "/";
  return real.startsWith(base);
}
