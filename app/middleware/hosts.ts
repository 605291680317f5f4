/**
 * Host check: with `APP_HOSTS` set, a request for any other host is answered 421 (Misdirected
 * Request) before it reaches a site, so nothing downstream ever sees an unlisted `Host`.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { hostAllowed, type PublicUrlEnv } from "../public_url.ts";

/**
 * The middleware; a no-op without `APP_HOSTS`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { loadAppEnv } from "../env.ts";
 * import { allowedHosts } from "./hosts.ts";
 * const app = new Hono().use("*", allowedHosts(loadAppEnv({ APP_HOSTS: "app.example" })));
 * const res = await app.request("http://evil.example/");
 * console.log(res.status); // 421
 * ```
 */
export function allowedHosts(env: PublicUrlEnv): MiddlewareHandler {
  return async (c, next) => {
    if (!hostAllowed(env, c.req.raw)) {
      return c.text("This host is not served here (see APP_HOSTS).", 421, {
        "cache-control": "no-store",
      });
    }
    await next();
  };
}
