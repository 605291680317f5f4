/**
 * The admin API: `/load`, `/stop`, `/config/[path]`, `/id/<id>/[path]`, `/adapt` and the
 * routes modules register. Handlers stay short: the engine and the config tree do the work.
 *
 * @module
 */
import type { ConnHandler } from "../module/listener.ts";
import type { AdminRoute } from "../module/mod.ts";
import type { Logger } from "../module/instance.ts";
import { AdminError, toAdminError } from "../errors.ts";
import { adaptByContentType, type AdaptResult } from "../adapter.ts";
import {
  checkJsonDepth,
  checkJsonNumbers,
  checkValueDepth,
  type TreeMethod,
} from "../config_tree.ts";
import { type AdminSecurity, checkAdminRequest } from "./security.ts";
import { parseAdminPath, requestTarget, validHost } from "./request.ts";

const JSON_HEADERS = { "content-type": "application/json" };

/** Answers an error as `{"error": "..."}` with its status. */
export function errorResponse(e: AdminError): Response {
  return new Response(JSON.stringify({ error: e.message }) + "\n", {
    status: e.status,
    headers: JSON_HEADERS,
  });
}

/** Reads a body, refusing more than `limit` bytes with 413. */
async function readBody(req: Request, limit: number): Promise<string> {
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (declared > limit) {
    throw new AdminError("too_large", `request body too large: limit is ${limit} bytes`);
  }
  if (!req.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = req.body.getReader();
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await reader.read();
    } catch (e) {
      throw new AdminError("bad_request", `reading request body: ${(e as Error).message}`);
    }
    if (r.done) break;
    size += r.value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw new AdminError("too_large", `request body too large: limit is ${limit} bytes`);
    }
    chunks.push(r.value);
  }
  const all = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.length;
  }
  return new TextDecoder().decode(all);
}

const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Adapts a `/load` or `/adapt` body. JSON text is refused past the nesting limit before it is
 * parsed; any adapter's result is held to the same limit, and to finite numbers.
 */
async function adapt(req: Request, raw: string): Promise<AdaptResult> {
  const ct = req.headers.get("content-type");
  const type = (ct ?? "").split(";")[0].trim().toLowerCase();
  if (type === "" || type.endsWith("/json")) checkJsonDepth(raw);
  const adapted = await adaptByContentType(ct, raw);
  checkValueDepth(adapted.result);
  checkJsonNumbers(adapted.result);
  return adapted;
}

/** How a change to the config tree is made: `If-Match` and the forced reload. */
export interface ChangeOptions {
  /** The `If-Match` header: the change applies only while the hash at its path is this. */
  ifMatch?: string | null;
  /** Reload even when the result equals the running config (`Cache-Control: must-revalidate`). */
  force?: boolean;
}

/**
 * What the admin API needs from the config authority behind it (the engine implements it):
 * reading and changing the config tree, whole loads, the routes modules registered, a stop.
 */
export interface ConfigAuthority {
  /** The core's logger (`admin.api` is named from it). */
  readonly log: Logger;
  /** `maxBodyBytes`: the largest request body the admin API reads (default 100 MiB). */
  readonly options: { readonly maxBodyBytes?: number };
  /** The JSON text and Etag of the tree at `path`. Throws an AdminError (404). */
  read(path: string): { body: string; etag: string };
  /** The tree path of an `@id`. Throws an AdminError (404). */
  resolveId(id: string): string;
  /** Changes the tree at a path (or the path a resolver gives in the change's turn), then loads. */
  change(
    method: TreeMethod,
    path: string | (() => string),
    body: string,
    options?: ChangeOptions,
  ): Promise<boolean>;
  /** Replaces the whole config; false when unchanged and not forced. */
  load(config: unknown, force?: boolean): Promise<boolean>;
  /** Stops the server soon (after the answer to `/stop` went out). */
  requestStop(): void;
  /** The admin routes the running config's modules registered. */
  readonly moduleRoutes: readonly AdminRoute[];
}

/** Creates the admin endpoint's handler for one config's security settings. */
export function createAdminHandler(engine: ConfigAuthority, sec: AdminSecurity): ConnHandler {
  const log = engine.log.named("admin.api");
  const limit = engine.options.maxBodyBytes ?? 100 * 1024 * 1024;

  // `path` is a function for /id/ requests: the id resolves inside the change's turn, so the
  // request stays atomic even when a concurrent change moves the object
  const config = async (req: Request, path: string | (() => string)): Promise<Response> => {
    if (req.method === "GET") {
      const { body, etag } = engine.read(typeof path === "string" ? path : path());
      return new Response(body, { headers: { ...JSON_HEADERS, etag } });
    }
    if (!MUTATIONS.has(req.method)) {
      throw new AdminError("method_not_allowed", `method ${req.method} not allowed`);
    }
    let body = "";
    if (req.method !== "DELETE") {
      const ct = req.headers.get("content-type") ?? "";
      if (!ct.includes("/json")) {
        throw new AdminError(
          "bad_request",
          `unacceptable content-type: ${ct}; 'application/json' required`,
        );
      }
      body = await readBody(req, limit);
    } else if (req.body) await req.body.cancel();
    const force = req.headers.get("cache-control") === "must-revalidate";
    await engine.change(req.method as TreeMethod, path, body, {
      ifMatch: req.headers.get("if-match"),
      force,
    });
    return new Response(null, { status: 200 });
  };

  // `path` is the canonical decoded path (see request.ts): no dot-segments, no encoded slashes
  const route = async (req: Request, path: string): Promise<Response> => {
    if (path === "/config" || path.startsWith("/config/")) return await config(req, path);
    if (path.startsWith("/id/") || path === "/id") {
      const parts = path.split("/");
      if (parts.length < 3 || parts[2] === "") {
        throw new AdminError("bad_request", "request path is missing object ID");
      }
      engine.resolveId(parts[2]); // 404 before reading any body
      return await config(req, () => {
        const expanded = [engine.resolveId(parts[2]), ...parts.slice(3)].join("/")
          .replace(/\/+/g, "/");
        return expanded.length > 1 && expanded.endsWith("/") ? expanded.slice(0, -1) : expanded;
      });
    }
    if (path === "/load") {
      if (req.method !== "POST") throw new AdminError("method_not_allowed", "method not allowed");
      const raw = await readBody(req, limit);
      const { result, warnings } = await adapt(req, raw);
      const force = req.headers.get("cache-control") === "must-revalidate";
      await engine.load(result, force);
      log.info("load complete");
      return warnings.length
        ? new Response(JSON.stringify(warnings), { headers: JSON_HEADERS })
        : new Response(null, { status: 200 });
    }
    if (path === "/adapt") {
      if (req.method !== "POST") throw new AdminError("method_not_allowed", "method not allowed");
      const raw = await readBody(req, limit);
      const { result, warnings } = await adapt(req, raw);
      const out = warnings.length ? { warnings, result } : { result };
      return new Response(JSON.stringify(out) + "\n", { headers: JSON_HEADERS });
    }
    if (path === "/stop") {
      if (req.method !== "POST") throw new AdminError("method_not_allowed", "method not allowed");
      setTimeout(() => engine.requestStop(), 0);
      return new Response(null, { status: 200 });
    }
    const match = engine.moduleRoutes
      .filter((r) => routeMatches(r.pattern, path))
      .sort((a, b) => b.pattern.length - a.pattern.length)[0];
    if (match) return await match.handle(req);
    throw new AdminError("not_found", `no admin endpoint at ${path}`);
  };

  return async (req) => {
    const target = requestTarget(req);
    const host = req.headers.get("host") ?? "";
    log.info("received request", { method: req.method, host, uri: target });
    let allowOrigin: string | undefined;
    let res: Response;
    try {
      if (!validHost(host)) {
        throw new AdminError(
          "bad_request",
          `malformed Host header: ${JSON.stringify(host.slice(0, 100))}`,
        );
      }
      allowOrigin = checkAdminRequest(req, sec);
      res = await route(req, parseAdminPath(target));
    } catch (e) {
      const err = toAdminError(e);
      log.error("request error", { error: err.message, status_code: err.status });
      res = errorResponse(err);
    }
    if (allowOrigin) {
      try {
        res.headers.get("x"); // module routes may answer with immutable headers: copy then
        res.headers.set("vary", res.headers.get("vary") ?? "Origin");
      } catch {
        res = new Response(res.body, res);
      }
      res.headers.set("access-control-allow-origin", allowOrigin);
      if (req.method === "OPTIONS") {
        res.headers.set("access-control-allow-methods", "OPTIONS, GET, POST, PUT, PATCH, DELETE");
        res.headers.set(
          "access-control-allow-headers",
          "Content-Type, Content-Length, Cache-Control",
        );
        res.headers.set("access-control-allow-credentials", "true");
      }
    }
    return res;
  };
}

/**
 * True when `path` is under `pattern` (equal, or below it).
 *
 * @example
 * ```ts
 * import { routeMatches } from "./handler.ts";
 * routeMatches("/pki/ca/", "/pki/ca/local"); // true
 * ```
 */
export function routeMatches(pattern: string, path: string): boolean {
  return path === pattern ||
    (pattern.endsWith("/") ? path.startsWith(pattern) : path.startsWith(pattern + "/"));
}
