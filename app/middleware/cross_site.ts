/**
 * Cross-site request refusal for the whole app: a state-changing request (any method but GET,
 * HEAD and OPTIONS) that a browser sent from another site is answered 403 `forbidden` before
 * it reaches a route. The rule is the one of Go's `http.CrossOriginProtection`:
 *
 * 1. `Sec-Fetch-Site: same-origin` or `none` → allowed; any other value (`cross-site`,
 *    `same-site`) → refused. Browsers set this header and pages cannot change it.
 * 2. Without it (older browsers): an `Origin` header must be one of the app's origins (its
 *    `APP_URL`, its `APP_HOSTS`, or the request's own origin); `Origin: null` is refused.
 * 3. With neither header the request did not come from a browser page (curl, a server, the
 *    OAuth client's token call): allowed, as cookies of a browser are not involved.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { type PublicUrlEnv, trustedOrigins } from "../public_url.ts";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);

/** Why a request is refused, or null when it may go on. */
export function crossSiteProblem(env: PublicUrlEnv, request: Request): string | null {
  if (SAFE.has(request.method)) return null;
  const site = request.headers.get("sec-fetch-site");
  if (site !== null) {
    return site === "same-origin" || site === "none" ? null : `Sec-Fetch-Site: ${site}`;
  }
  const origin = request.headers.get("origin");
  if (origin === null) return null;
  return trustedOrigins(env, request).has(origin) ? null : `Origin: ${origin}`;
}

/**
 * The middleware: 403 `forbidden` (plain text, like the sites' other refusals) for a
 * cross-site state-changing request.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { loadAppEnv } from "../env.ts";
 * import { refuseCrossSite } from "./cross_site.ts";
 * const app = new Hono().use("*", refuseCrossSite(loadAppEnv({})));
 * app.post("/logout", (c) => c.text("bye"));
 * const res = await app.request("/logout", {
 *   method: "POST",
 *   headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" },
 * });
 * console.log(res.status); // 403
 * ```
 */
export function refuseCrossSite(env: PublicUrlEnv): MiddlewareHandler {
  return async (c, next) => {
    if (crossSiteProblem(env, c.req.raw) !== null) {
      return c.text("forbidden", 403, {
        "cache-control": "no-store",
        vary: "Origin, Sec-Fetch-Site",
      });
    }
    await next();
  };
}
