/**
 * Wrong methods: a path the server answers, asked with a method it does not take, answers
 * HTTP 405 with code 432, an `Allow` header and a message naming the methods it takes — on the
 * customer API, the sandbox, the documents and the mailroom alike, before any key or operator
 * token is checked.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { MailServerError } from "./errors.ts";
import type { MailEnv } from "./context.ts";

/** Every method a handler is registered for (HEAD is answered as GET by the router). */
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/**
 * The methods of each path of a route table (`[method, path]` pairs, paths in the router's
 * `:param` form), in the order the paths first appear.
 */
export function methodsByPath(routes: Iterable<readonly [string, string]>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [method, path] of routes) {
    const list = out.get(path) ?? [];
    if (!list.includes(method)) list.push(method);
    out.set(path, list);
  }
  return out;
}

/** The `Allow` header value of a path taking `methods`: HEAD wherever GET is, sorted. */
export function allowHeader(methods: readonly string[]): string {
  const all = new Set(methods);
  if (all.has("GET")) all.add("HEAD");
  return [...all].sort().join(", ");
}

/** `GET`, `GET or POST`, `GET, PATCH or PUT`. */
function inWords(methods: readonly string[]): string {
  const sorted = [...methods].sort();
  return sorted.length === 1
    ? sorted[0]
    : `${sorted.slice(0, -1).join(", ")} or ${sorted[sorted.length - 1]}`;
}

/** The 432 error for `path` taking `methods`. */
export function wrongMethodError(path: string, methods: readonly string[]): MailServerError {
  return new MailServerError(
    432,
    `Specified method is incorrect, please recheck and try again later. ${path.slice(0, 200)} ` +
      `takes ${inWords(methods)}.`,
    { Allow: allowHeader(methods) },
  );
}

/**
 * Registers, on `app`, a handler answering 432/405 for every method a path of `table` does not
 * take. Register it before the routers whose credentials it must come before.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { errorResponse } from "./http.ts";
 * import { methodsByPath, refuseOtherMethods } from "./methods.ts";
 * import type { MailEnv } from "./context.ts";
 * const app = new Hono<MailEnv>();
 * app.onError((err, c) => errorResponse(c, err));
 * refuseOtherMethods(app, methodsByPath([["GET", "/items"], ["POST", "/items"]]));
 * const res = await app.request("/items", { method: "DELETE" });
 * console.log(res.status, res.headers.get("allow")); // 405 "GET, HEAD, POST"
 * ```
 */
export function refuseOtherMethods(app: Hono<MailEnv>, table: Map<string, string[]>): void {
  for (const [path, methods] of table) {
    const others = METHODS.filter((m) => !methods.includes(m));
    if (others.length === 0) continue;
    app.on(others, path, function wrongMethod(c: Context): never {
      throw wrongMethodError(c.req.path, methods);
    });
  }
}
