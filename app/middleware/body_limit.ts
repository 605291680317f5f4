/**
 * Request body limits of the reference app: every route has one, and a body over it is
 * answered 413 without being read whole. A declared `Content-Length` over the limit is refused
 * before any byte of the body is read (whatever the method); a body without a length (chunked)
 * is counted as it streams and refused as soon as it passes the limit (Hono's `bodyLimit`). A
 * GET or HEAD body is never read at all.
 *
 * Limits: {@linkcode FORM_BODY_LIMIT} (16 KiB) for every route of the sign-in sites, the
 * broker, the development provider and the index; the mail API sets its own per route (64 KiB
 * JSON, 20 MiB mailroom uploads after the operator token is checked, see `lib/mail/server.ts`).
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

/** The body limit of the sign-in sites' forms and every other app route: 16 KiB. */
export const FORM_BODY_LIMIT = 16 * 1024;

/** A mount path and its limit in bytes, or `"own"` when the mounted app enforces its own. */
export interface BodyLimitRule {
  /** Mount path, e.g. `/owner`. */
  path: string;
  /** Largest body in bytes, or `"own"`. */
  limit: number | "own";
}

/** The 413 answer: JSON `{error: "body_too_large", limit}` or, for a browser, a short text. */
export function tooLarge(c: Context, limit: number): Response {
  const headers = { "cache-control": "no-store", connection: "close" };
  if ((c.req.header("accept") ?? "").includes("text/html")) {
    return c.text(
      `The request body is too large (the limit here is ${limit} bytes).`,
      413,
      headers,
    );
  }
  return c.json({ error: "body_too_large", limit }, 413, headers);
}

/**
 * One middleware for the whole app: the limit of the longest mount path that contains the
 * request's path, else `fallback`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { bodyLimits } from "./body_limit.ts";
 * const app = new Hono().use("*", bodyLimits([{ path: "/owner", limit: 16384 }], 16384));
 * app.post("/owner/login", (c) => c.text("ok"));
 * const res = await app.request("/owner/login", { method: "POST", body: "x".repeat(20000) });
 * console.log(res.status); // 413
 * ```
 */
export function bodyLimits(rules: BodyLimitRule[], fallback: number): MiddlewareHandler {
  const sorted = [...rules].sort((a, b) => b.path.length - a.path.length);
  const limiters = new Map<number, MiddlewareHandler>();
  const limiter = (max: number) => {
    let found = limiters.get(max);
    if (!found) {
      found = bodyLimit({ maxSize: max, onError: (c) => tooLarge(c, max) });
      limiters.set(max, found);
    }
    return found;
  };
  return async (c, next) => {
    const path = c.req.path;
    const rule = sorted.find((r) => path === r.path || path.startsWith(`${r.path}/`));
    const limit = rule ? rule.limit : fallback;
    if (limit === "own") return await next();
    // A GET or HEAD body is never handed to a route (Deno drops it), but its declared length
    // is still held to the limit.
    if (Number(c.req.header("content-length") ?? 0) > limit) return tooLarge(c, limit);
    return await limiter(limit)(c, next);
  };
}
