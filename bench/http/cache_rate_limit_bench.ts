/**
 * CPU cost of `rate_limit` and of a `cache` hit, without the network: the http server's
 * handler on the same Request, with and without each.
 * `deno bench -A bench/http/cache_rate_limit_bench.ts`
 */
import "../../lib/server/http/mod.ts";
import { getModule, type ProvisionContext } from "../../lib/server/module/mod.ts";
import type { ServeInfo } from "../../lib/server/module/listener.ts";
import type { ModuleInstance } from "../../lib/server/module/instance.ts";
import { HttpServer } from "../../lib/server/http/server.ts";

const noopLogger = {
  name: "",
  debug() {},
  info() {},
  warn() {},
  error() {},
  named() {
    return noopLogger;
  },
  enabled: () => false,
};
const ctx = {
  async loadModule<T extends ModuleInstance>(ns: string, key: string, raw: unknown) {
    const name = (raw as Record<string, string>)[key];
    return await ctx.loadModuleByName<T>(ns, name, raw);
  },
  async loadModuleByName<T extends ModuleInstance>(ns: string, name: string, raw: unknown) {
    return await getModule(`${ns}.${name}`)!.create(
      raw as Record<string, unknown>,
      ctx as ProvisionContext,
    ) as T;
  },
  app: () => Promise.resolve(undefined),
  logger: () => noopLogger,
  onCleanup() {},
  registerAdminRoute() {},
  validating: false,
} as unknown as ProvisionContext;

const respond = { handler: "static_response", body: "Hello, World!" };
const server = await HttpServer.create(
  "bench",
  {
    listen: [],
    routes: [
      { match: [{ path: ["/respond"] }], handle: [respond], terminal: true },
      {
        match: [{ path: ["/limited"] }],
        handle: [
          {
            handler: "rate_limit",
            rate_limits: {
              bench: { key: "{http.request.remote.host}", window: "1s", max_events: 10_000_000 },
            },
          },
          respond,
        ],
        terminal: true,
      },
      {
        match: [{ path: ["/cached"] }],
        handle: [{ handler: "cache" }, {
          ...respond,
          headers: { "Cache-Control": ["max-age=600"] },
        }],
        terminal: true,
      },
    ],
  },
  ctx,
  80,
);

const info: ServeInfo = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 50000 },
  localAddress: "127.0.0.1:8080",
};
const plain = new Request("http://localhost/respond");
const limited = new Request("http://localhost/limited");
const cached = new Request("http://localhost/cached");
await (await server.handle(cached, info)).arrayBuffer();

Deno.bench("respond", { group: "rate_limit", baseline: true }, async () => {
  await (await server.handle(plain, info)).arrayBuffer();
});
Deno.bench(
  "rate_limit (one zone, key {remote_host}) + respond",
  { group: "rate_limit" },
  async () => {
    await (await server.handle(limited, info)).arrayBuffer();
  },
);
Deno.bench("respond", { group: "cache", baseline: true }, async () => {
  await (await server.handle(plain, info)).arrayBuffer();
});
Deno.bench("cache hit (memory) in front of respond", { group: "cache" }, async () => {
  await (await server.handle(cached, info)).arrayBuffer();
});

// the handler alone, on one request context: the cost of a zone's match, key and window
const { RequestContext } = await import("../../lib/server/http/context.ts");
const { RateLimit } = await import("../../lib/server/http/handlers/rate_limit/handler.ts");
const { decodeRateLimit } = await import("../../lib/server/http/handlers/rate_limit/config.ts");
const limiter = await RateLimit.provision(
  decodeRateLimit({
    handler: "rate_limit",
    rate_limits: {
      alone: { key: "{http.request.remote.host}", window: "1s", max_events: 10_000_000 },
    },
  }),
  ctx,
);
const facts = { name: "bench", timed: false, clientIP: () => "127.0.0.1" };
const c = new RequestContext(new Request("http://localhost/x"), info, facts);
const done = new Response("ok");
const tail = () => done;
Deno.bench("next() alone", { group: "rate_limit handler", baseline: true }, () => {
  tail();
});
Deno.bench("rate_limit.serveHTTP → next()", { group: "rate_limit handler" }, () => {
  limiter.serveHTTP(c, tail);
});
