/**
 * CPU cost of the request pipeline without the network: the http server's handler (context,
 * route matching, handler, response finishing) against a bare handler, on the same Request.
 * `deno bench -A bench/http/pipeline_bench.ts`
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
  logger: () => noopLogger,
  onCleanup() {},
  registerAdminRoute() {},
} as unknown as ProvisionContext;

const server = await HttpServer.create(
  "bench",
  {
    listen: [],
    routes: [
      {
        match: [{ path: ["/api/*"] }],
        handle: [{ handler: "static_response", status_code: 404 }],
        terminal: true,
      },
      {
        match: [{ host: ["localhost"], path: ["/respond"] }],
        handle: [{ handler: "static_response", body: "Hello, World!" }],
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
const req = new Request("http://localhost/respond");

Deno.bench(
  "bare handler: new Response(13 bytes)",
  { group: "respond", baseline: true },
  async () => {
    const r = new Response("Hello, World!");
    await r.arrayBuffer();
  },
);

Deno.bench(
  "gatehouse: 2 routes, host+path match, static_response",
  { group: "respond" },
  async () => {
    const r = await server.handle(req, info);
    await r.arrayBuffer();
  },
);
