/**
 * A minimal provisioning context over `Deno.serve` for the http app's tests: loads modules
 * from the registry, serves listeners on loopback, captures log records. It stands in for
 * the config engine so handler tests need nothing but the http app.
 */
import "../../../lib/server/http/mod.ts";
import {
  type AdminRoute,
  type App,
  type ConnHandler,
  getModule,
  type ListenerHandle,
  type LogFields,
  type Logger,
  type LogLevel,
  type ModuleInstance,
  type ProvisionContext,
  type Storage,
} from "../../../lib/server/module.ts";

export interface LogRecord {
  level: string;
  ts: number;
  logger: string;
  msg: string;
  [k: string]: unknown;
}

export interface Running {
  /** Base URL of the first listener of a server (`http://127.0.0.1:port`). */
  url(server?: string, index?: number): string;
  /** Bound ports of a server. */
  ports(server?: string): number[];
  logs: LogRecord[];
  adminRoutes: AdminRoute[];
  /** Calls an admin route registered by a module. */
  admin(path: string): Promise<Response>;
  stop(): Promise<void>;
}

function makeLogger(name: string, sink: LogRecord[]): Logger {
  const emit = (level: string) => (msg: string, fields?: LogFields) => {
    sink.push({ level, ts: Date.now() / 1000, logger: name, msg, ...(fields ?? {}) });
  };
  return {
    name,
    debug: emit("debug"),
    info: emit("info"),
    warn: emit("warn"),
    error: emit("error"),
    named: (sub: string) => makeLogger(`${name}.${sub}`, sink),
    enabled: (_l: LogLevel) => true,
  };
}

const memoryStorage = (): Storage => {
  const m = new Map<string, Uint8Array>();
  return {
    load: (k) => Promise.resolve(m.get(k) ?? null),
    store: (k, v) => Promise.resolve(void m.set(k, v)),
    delete: (k) => Promise.resolve(void m.delete(k)),
    list: (p) => Promise.resolve([...m.keys()].filter((k) => k.startsWith(p))),
    exists: (k) => Promise.resolve(m.has(k)),
    lock: () => Promise.resolve(),
    unlock: () => Promise.resolve(),
  };
};

/** Provisions and starts an `http` app config (`apps.http` value) on loopback. */
export async function startHttp(httpConfig: Record<string, unknown>): Promise<Running> {
  const logs: LogRecord[] = [];
  const cleanups: (() => void | Promise<void>)[] = [];
  const instances: ModuleInstance[] = [];
  const adminRoutes: AdminRoute[] = [];
  const servers: Deno.HttpServer[] = [];
  const boundBy = new Map<string, number>();
  const abort = new AbortController();
  const ctx: ProvisionContext = {
    async loadModule<T extends ModuleInstance>(ns: string, key: string, raw: unknown) {
      const name = (raw as Record<string, unknown>)?.[key];
      if (typeof name !== "string") throw new Error(`${ns}: missing "${key}"`);
      return await ctx.loadModuleByName<T>(ns, name, raw);
    },
    async loadModuleByName<T extends ModuleInstance>(ns: string, name: string, raw: unknown) {
      const def = getModule(`${ns}.${name}`);
      if (!def) throw new Error(`unknown module: ${ns}.${name}`);
      const inst = await def.create(raw as Record<string, unknown>, ctx) as T;
      instances.push(inst);
      return inst;
    },
    logger: (name) => makeLogger(name, logs),
    app: () => Promise.resolve(undefined),
    listen(options) {
      let handler: ConnHandler = () => new Response(null, { status: 502 });
      const m = /^(.*):(\d+)$/.exec(options.address)!;
      const hostname = m[1] === "" ? "127.0.0.1" : m[1].replace(/^\[|\]$/g, "");
      const server = Deno.serve({
        hostname,
        port: Number(m[2]),
        onListen: () => {},
      }, (req, info) =>
        handler(req, {
          remoteAddr: info.remoteAddr as { transport: "tcp"; hostname: string; port: number },
          localAddress: options.address,
        }));
      servers.push(server);
      const addr = server.addr as Deno.NetAddr;
      const handle: ListenerHandle = {
        address: `${addr.hostname}:${addr.port}`,
        port: addr.port,
        setHandler: (h) => void (handler = h),
        release: () => server.shutdown(),
      };
      return Promise.resolve(handle);
    },
    storage: memoryStorage(),
    registerAdminRoute: (r) => void adminRoutes.push(r),
    onCleanup: (fn) => void cleanups.push(fn),
    signal: abort.signal,
  };
  void boundBy;
  const app = await getModule("http")!.create(httpConfig, ctx) as App & {
    servers: Map<string, { listeners: ListenerHandle[] }>;
  };
  await app.start();
  return {
    url(server = Object.keys(httpConfig.servers as object)[0], index = 0) {
      return `http://127.0.0.1:${app.servers.get(server)!.listeners[index].port}`;
    },
    ports(server = Object.keys(httpConfig.servers as object)[0]) {
      return app.servers.get(server)!.listeners.map((l) => l.port!);
    },
    logs,
    adminRoutes,
    async admin(path) {
      const r = adminRoutes.find((r) => path.startsWith(r.pattern));
      if (!r) return new Response("not found", { status: 404 });
      return await r.handle(new Request(`http://admin${path}`));
    },
    async stop() {
      abort.abort();
      await app.stop();
      for (const inst of instances) await inst.cleanup?.();
      for (const fn of cleanups) await fn();
      await Promise.all(servers.map((s) => s.finished));
    },
  };
}

/** Starts a single server `srv0` listening on a free loopback port with the given routes. */
export function serve(routes: unknown[], extra: Record<string, unknown> = {}): Promise<Running> {
  return startHttp({ servers: { srv0: { listen: ["127.0.0.1:0"], routes, ...extra } } });
}
