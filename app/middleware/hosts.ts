/**
 * Host check, before anything reads the request's URL: a `Host` header that is not a host name
 * or address with an optional port (`/`, `?`, `#`, spaces, `%`, non-ASCII, an unclosed `[`)
 * is answered 400 — Deno builds the request URL by pasting the header in, so such a host would
 * otherwise move the path or break URL parsing. With `APP_HOSTS` set, a well-formed host that
 * is not listed is answered 421 (Misdirected Request), so nothing downstream ever sees it.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { hostAllowed, type PublicUrlEnv } from "../public_url.ts";

const HOST =
  /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

/** True for a `Host` header value of the form `name[:port]`, `a.b.c.d[:port]` or `[v6][:port]`. */
export function wellFormedHost(value: string): boolean {
  return value.length <= 260 && HOST.test(value);
}

/**
 * The middleware.
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
    const host = c.req.header("host");
    let parses = true;
    try {
      new URL(c.req.url);
    } catch {
      parses = false;
    }
    if ((host !== undefined && !wellFormedHost(host)) || !parses) {
      return c.text("Bad Request: malformed Host header.", 400, { "cache-control": "no-store" });
    }
    if (!hostAllowed(env, c.req.raw)) {
      return c.text("This host is not served here (see APP_HOSTS).", 421, {
        "cache-control": "no-store",
      });
    }
    await next();
  };
}
