/**
 * The mail-scanning server: a Hono router with the customer API (peer-compatible), the
 * sandbox, signed file links, the OpenAPI document and the mailroom API, on libSQL.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AuthThrottle, type AuthThrottleOptions, clientKey } from "./auth_throttle.ts";
import { checkApiKey, checkOperatorToken } from "./credentials.ts";
import { actionMessage, performAction } from "./actions.ts";
import { type BlobStore, contentTypeOf, isBlobKey, LocalBlobStore } from "./blobs.ts";
import { randomToken } from "./crypto.ts";
import { MailDb, type SqlClient } from "./db.ts";
import { MailServerError } from "./errors.ts";
import { errorResponse, jsonBody, parseActionBody, parseListQuery } from "./http.ts";
import { listItems } from "./items.ts";
import type { MailContext, MailEnv } from "./context.ts";
import { ITEM_ACTIONS, type ItemAction } from "./lifecycle.ts";
import { mailroomRouter } from "./mailroom_api.ts";
import { methodsByPath, refuseOtherMethods, wrongMethodError } from "./methods.ts";
import { openApiDocument } from "./openapi.ts";
import { RateLimiter, type RateLimitOptions } from "./rate_limit.ts";
import { isAutomationName } from "./rules.ts";
import { compressedJson, referenceRouter } from "./reference_page.ts";
import { sandboxRouter } from "./sandbox_api.ts";
import { FileSigner } from "./signed_url.ts";
import { listSystemRules, setSystemRule } from "./system_rules.ts";
import { WebhookDispatcher, type WebhookOptions } from "./webhooks.ts";

/** The API's path on a host, as the peer service uses it. */
export const MAIL_BASE_PATH = "/api/account-docs/v2";

/** Settings of `createMailServer`. */
export interface MailServerOptions {
  /** The libSQL client holding the `mail_` tables (created when missing). */
  client: SqlClient;
  /** Where envelope images and scans go (default a `LocalBlobStore` on `blobDir`). */
  blobs?: BlobStore;
  /** Directory of the default blob store (default `.data/mail-blobs`). */
  blobDir?: string;
  /** Secret signing file links (default random per process: links die with it). */
  signingSecret?: string;
  /** Lifetime of file links in seconds (default 3600). */
  fileLinkTtlSeconds?: number;
  /** Bearer token of the mailroom API; without one the mailroom API answers 401 to all. */
  operatorToken?: string;
  /** Path the router is mounted at, for file links (default `/api/account-docs/v2`). */
  basePath?: string;
  /**
   * Public origin of file links and of the index's OpenAPI link, e.g. `https://mail.example`,
   * or a function of the request returning it. Without it the request's own origin is used,
   * which comes from the `Host` header: set it wherever the server is reachable by others.
   */
  publicUrl?: string | ((request: Request) => string);
  /** Per-key rate limit (default 120 burst, 2/s), or false for none. */
  rateLimit?: RateLimitOptions | false;
  /**
   * Throttle of wrong API keys and operator tokens, per client and per key prefix, kept in the
   * database (defaults in `AuthThrottleOptions`: 10 free per client, 50 per prefix, backoff
   * from 1 s doubling to 15 min, forgotten after 1 h), or false for none.
   */
  authThrottle?: AuthThrottleOptions | false;
  /**
   * The client's address for the throttle. Default: the connection's remote address (the
   * `info` that `Deno.serve` passes to `fetch`). Behind a proxy, read the address the proxy
   * sets (e.g. the last entry of `X-Forwarded-For` that your proxy appends).
   */
  clientAddress?: (request: Request, info: MailRequestInfo | undefined) => string | undefined;
  /** Webhook delivery settings. */
  webhooks?: WebhookOptions;
  /** Largest JSON body in bytes (default 65536). */
  maxBodyBytes?: number;
  /** Largest mailroom upload in bytes (default 20 MiB). */
  maxUploadBytes?: number;
  /** Clock, epoch ms (tests). */
  now?: () => number;
}

/**
 * A running mail server. Its `fetch` is a Hono router that answers under `basePath`: serve it
 * (`Deno.serve(mail.fetch)`) or hand it the requests of that path from any app
 * (`app.all(MAIL_BASE_PATH + "/*", (c) => mail.fetch(c.req.raw))`).
 */
export interface MailServer {
  /**
   * Answers a request whose path starts with `basePath`; `info` (what `Deno.serve` passes)
   * gives the client's address to the wrong-credential throttle.
   */
  fetch(request: Request, info?: MailRequestInfo): Promise<Response>;
  /** Its blob store. */
  blobs: BlobStore;
  /** Resolves once no webhook delivery is queued, waiting or in flight. */
  idle(): Promise<void>;
  /** Stops webhook deliveries (does not close the libSQL client, which the caller owns). */
  close(): Promise<void>;
}

/** What the server reads from a connection: its remote address (`Deno.ServeHandlerInfo` fits). */
export interface MailRequestInfo {
  /** The client's address. */
  remoteAddr: { hostname: string } | { transport: string };
}

/** Parts of a server for in-process use (the standalone runner, the reference app, bench). */
export interface MailInternals {
  /** The Hono router. */
  router: Hono;
  /** Database handle. */
  db: MailDb;
  /** Webhook dispatcher. */
  webhooks: WebhookDispatcher;
}

const internals = new WeakMap<MailServer, MailInternals>();

/** The in-process parts of a server made by `createMailServer`. */
export function mailInternals(server: MailServer): MailInternals {
  const found = internals.get(server);
  if (!found) throw new Error("not a server made by createMailServer");
  return found;
}

/**
 * A body limit answering HTTP 413 with code 19: a `Content-Length` over `max` is refused
 * before the body is read, a body without one is refused as soon as it streams past `max`.
 */
function bodyLimitOf(max: number): MiddlewareHandler<MailEnv> {
  return bodyLimit({
    maxSize: max,
    onError: (c) =>
      errorResponse(
        c,
        new MailServerError(19, `Request body too large (limit ${max} bytes).`, {}, 413),
      ),
  });
}

/**
 * Builds the server: migrates the tables, resumes pending webhook deliveries, returns the
 * router.
 *
 * @example
 * ```ts
 * import { createClient } from "@libsql/client";
 * import { createMailServer } from "./server.ts";
 * const mail = await createMailServer({
 *   client: createClient({ url: "file:mail.db" }),
 *   operatorToken: "a long random operator token",
 * });
 * Deno.serve({ hostname: "127.0.0.1", port: 8787 }, mail.fetch);
 * ```
 */
export async function createMailServer(options: MailServerOptions): Promise<MailServer> {
  const db = new MailDb(options.client, options.now);
  await db.migrate();
  const blobs = options.blobs ?? new LocalBlobStore(options.blobDir ?? ".data/mail-blobs");
  const signer = new FileSigner(
    options.signingSecret ?? randomToken(32),
    options.fileLinkTtlSeconds,
    options.now,
  );
  const basePath = options.basePath ?? MAIL_BASE_PATH;
  const webhooks = new WebhookDispatcher(db, options.webhooks);
  await webhooks.resume();
  const limiter = options.rateLimit === false ? null : new RateLimiter(options.rateLimit);
  const publicUrl = options.publicUrl;
  const fixedOrigin = typeof publicUrl === "string" ? new URL(publicUrl).origin : null;
  const origin = (request: Request): string =>
    fixedOrigin ??
      (typeof publicUrl === "function"
        ? new URL(publicUrl(request)).origin
        : new URL(request.url).origin);

  const throttle = options.authThrottle === false
    ? null
    : new AuthThrottle(db, options.authThrottle);
  const addressOf = options.clientAddress ??
    ((_: Request, info: MailRequestInfo | undefined) =>
      info?.remoteAddr && "hostname" in info.remoteAddr ? info.remoteAddr.hostname : undefined);
  const clientOf = (c: Context) =>
    clientKey(addressOf(c.req.raw, c.env as MailRequestInfo | undefined));

  const auth: MiddlewareHandler<MailEnv> = async (c, next) => {
    const key = await checkApiKey(db, throttle, c.req.header("x-api-key"), clientOf(c));
    const wait = limiter?.take(key.keyId) ?? 0;
    if (wait > 0) throw new MailServerError(434, undefined, { "Retry-After": String(wait) });
    c.set("key", key);
    await next();
  };
  const operatorAuth: MiddlewareHandler<MailEnv> = async (c, next) => {
    const header = c.req.header("authorization");
    await checkOperatorToken(throttle, header, options.operatorToken, clientOf(c));
    await next();
  };
  const ctx: MailContext = {
    db,
    blobs,
    webhooks,
    auth,
    operatorAuth,
    maxBodyBytes: options.maxBodyBytes ?? 65536,
    maxUploadBytes: options.maxUploadBytes ?? 20 * 1024 * 1024,
    uploadLimit: bodyLimitOf(options.maxUploadBytes ?? 20 * 1024 * 1024),
    linker: (c) => {
      const base = origin(c.req.raw) + basePath;
      return (key) => signer.url(base, key);
    },
  };

  const app = new Hono<MailEnv>().basePath(basePath);
  app.onError((err, c) => errorResponse(c, err));
  // Deno builds the URL from the Host header as given: one that does not parse is refused
  // here, before any handler reads the URL.
  app.use("*", async (c, next) => {
    try {
      new URL(c.req.url);
    } catch {
      throw new MailServerError(19, "The Host header is malformed.", {}, 400);
    }
    await next();
  });
  // Body limits: 64 KiB (maxBodyBytes) on every route, checked before anything else; the two
  // mailroom upload routes take up to maxUploadBytes, checked only after the operator token
  // (mailroom_api.ts), so an anonymous client never gets more than the small limit read.
  const quoted = basePath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const uploads = new RegExp(`^${quoted}/mailroom/items(?:/[^/]+/complete)?/?$`);
  const small = bodyLimitOf(ctx.maxBodyBytes);
  app.use("*", async (c, next) => {
    if (c.req.method === "POST" && uploads.test(c.req.path)) return await next();
    return await small(c, next);
  });

  const routes: [string, string][] = [];
  const route = (method: string, path: string) => routes.push([method, path]);

  route("GET", "/items");
  app.get("/items", auth, async (c) => {
    const q = parseListQuery(c);
    return c.json(await listItems(db, c.var.key.accountId, q.page, q.sortOrder, ctx.linker(c)));
  });

  route("GET", "/user-defined-rules/system-user-defined-rules");
  app.get("/user-defined-rules/system-user-defined-rules", auth, async (c) => {
    const q = parseListQuery(c);
    return c.json(await listSystemRules(db, c.var.key.accountId, q.page, q.sortOrder));
  });

  route("PUT", "/user-defined-rules/update-system-user-defined-rule");
  app.put("/user-defined-rules/update-system-user-defined-rule", auth, async (c) => {
    const body = await jsonBody(c);
    if (!isAutomationName(body.automation_name)) {
      throw new MailServerError(
        19,
        "automation_name must be auto_scan, auto_shred or auto_discard",
      );
    }
    if (body.is_active !== 1 && body.is_active !== 0) {
      throw new MailServerError(19, "is_active must be 1 or 0");
    }
    await setSystemRule(db, c.var.key.accountId, body.automation_name, body.is_active === 1);
    return c.json({ status: 1, message: "Rule status updated successfully." });
  });

  for (const action of ITEM_ACTIONS) {
    for (const cancel of [false, true]) {
      const path = `/addresses/:address_id/items/actions/${action}${cancel ? "/cancel" : ""}`;
      route("POST", path);
      app.post(path, auth, async (c) => {
        const body = await jsonBody(c);
        const parsed = parseActionBody(body, action as ItemAction, cancel);
        await performAction(db, c.var.key.accountId, {
          action,
          cancel,
          addressId: c.req.param("address_id") ?? "",
          ...parsed,
        });
        return c.json({ status: 1, message: actionMessage(action, cancel) });
      });
    }
  }

  route("GET", "/files/:dir/:name");
  app.get("/files/:dir/:name", async (c) => {
    const key = `${c.req.param("dir")}/${c.req.param("name")}`;
    const query = new URL(c.req.url).searchParams;
    const expired = new MailServerError(
      9403,
      "The file link is invalid or has expired. GET /items again: every list carries fresh links.",
    );
    if (!isBlobKey(key) || !(await signer.verify(key, query))) throw expired;
    const bytes = await blobs.get(key);
    if (!bytes) throw expired;
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      "content-type": contentTypeOf(key),
      "cache-control": "private, max-age=300",
      "x-content-type-options": "nosniff",
    });
  });

  const index = (c: Context) => {
    const base = origin(c.req.raw) + basePath;
    return c.json({
      name: "Mail-scanning API",
      version: "v2",
      openapi: `${base}/openapi.json`,
      reference: `${base}/docs`,
    });
  };
  app.get("/", index);

  route("GET", "/openapi.json");
  app.get("/openapi.json", compressedJson(() => openApiDocument(basePath)));

  // Wrong methods answer 432/405 before any key or operator token is checked, so their
  // handlers come before the sub-routers: the table holds every path the server answers.
  route("GET", "/");
  route("GET", "/docs");
  route("GET", "/docs/assets/:file");
  route("POST", "/sandbox/items");
  route("POST", "/sandbox/items/:mail_id/complete");
  const mailroom = mailroomRouter(ctx);
  for (const r of mailroom.routes) {
    if (r.method !== "ALL") route(r.method, `/mailroom${r.path}`);
  }
  const methods = methodsByPath(routes);
  refuseOtherMethods(app, methods);
  app.route("/docs", referenceRouter(basePath));
  app.route("/sandbox", sandboxRouter(ctx));
  app.route("/mailroom", mailroom);
  app.all("*", (c) => {
    const root = c.req.path === `${basePath}/`;
    if (root && c.req.method === "GET") return index(c);
    if (root) throw wrongMethodError(c.req.path, methods.get("/")!);
    throw new MailServerError(
      9404,
      `No such endpoint: ${c.req.method} ${c.req.path.slice(0, 200)}. Every endpoint is in ` +
        `the reference at ${basePath}/docs and in ${basePath}/openapi.json.`,
    );
  });

  const router = app as unknown as Hono;
  const server: MailServer = {
    fetch: async (request, info) => await router.fetch(request, info),
    blobs,
    idle: () => webhooks.idle(),
    close: () => webhooks.close(),
  };
  internals.set(server, { router, db, webhooks });
  return server;
}
