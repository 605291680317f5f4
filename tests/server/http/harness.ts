/**
 * Runs `http` app configs on the real engine (`startServer`) for the http tests: picks free
 * loopback ports for `:0` listen addresses, opens the admin API on a free port, and sends
 * every log to a temp file as JSON lines so tests can read access log records.
 */
import { startServer } from "../../../lib/server/embed.ts";
import { freePort } from "../fixtures/helpers.ts";

export interface LogRecord {
  level: string;
  ts: number;
  logger: string;
  msg: string;
  [k: string]: unknown;
}

export interface Running {
  /** Base URL of a server's listener (`http://127.0.0.1:port`). */
  url(server?: string, index?: number): string;
  /** Ports of a server's listeners. */
  ports(server?: string): number[];
  /** Log records written so far. */
  logs(): Promise<LogRecord[]>;
  /** Waits until a log record satisfies `pred`. */
  waitLog(pred: (r: LogRecord) => boolean, timeoutMs?: number): Promise<LogRecord>;
  /** GET on the admin API. */
  admin(path: string): Promise<Response>;
  /** Loads a new `apps.http` config (same ports for `:0` addresses by position). */
  reload(httpConfig: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

export { freePort };

type Servers = Record<string, { listen?: string[] } & Record<string, unknown>>;

/** Starts the engine with an `apps.http` config on loopback. */
export async function startHttp(
  httpConfig: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<Running> {
  const logFile = await Deno.makeTempFile({ prefix: "gatehouse-http-log-", suffix: ".jsonl" });
  const assigned = new Map<string, number[]>();
  const withPorts = (cfg: Record<string, unknown>) => {
    const copy = structuredClone(cfg);
    for (const [name, s] of Object.entries((copy.servers ?? {}) as Servers)) {
      const ports = assigned.get(name) ?? [];
      s.listen = (s.listen ?? []).map((a, i) => {
        if (!a.endsWith(":0")) {
          const m = /:(\d+)$/.exec(a);
          if (m) ports[i] = Number(m[1]);
          return a;
        }
        ports[i] ??= freePort();
        return a.slice(0, -1) + ports[i];
      });
      assigned.set(name, ports);
      // Loopback test ports are not http_port: automatic HTTPS would make any server with a
      // host matcher HTTPS (as Caddy does). These tests are about HTTP; tests/server/tls/
      // covers automatic HTTPS.
      s.automatic_https ??= { disable: true };
    }
    return copy;
  };
  const fullConfig = (cfg: Record<string, unknown>) => ({
    admin: { listen: `127.0.0.1:${freePort()}` },
    logging: {
      logs: {
        default: {
          writer: { output: "file", filename: logFile, roll_disabled: true },
          encoder: { format: "json" },
          level: "DEBUG",
        },
      },
    },
    apps: { http: withPorts(cfg) },
    ...extra,
  });
  const server = await startServer({ config: fullConfig(httpConfig) });
  const first = Object.keys((httpConfig.servers ?? {}) as object)[0];
  const readLogs = async () => {
    const text = await Deno.readTextFile(logFile).catch(() => "");
    return text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as LogRecord);
  };
  return {
    url(name = first, index = 0) {
      return `http://127.0.0.1:${assigned.get(name)![index]}`;
    },
    ports(name = first) {
      return assigned.get(name)!;
    },
    logs: readLogs,
    async waitLog(pred, timeoutMs = 3000) {
      const end = Date.now() + timeoutMs;
      while (true) {
        const found = (await readLogs()).find(pred);
        if (found) return found;
        if (Date.now() > end) throw new Error("log record not found");
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    admin(path) {
      return fetch(`${server.adminUrl}${path}`);
    },
    async reload(cfg) {
      const c = fullConfig(cfg) as Record<string, unknown>;
      c.admin = { listen: server.adminAddress };
      await server.load(c);
    },
    async stop() {
      await server.stop();
      await Deno.remove(logFile).catch(() => {});
    },
  };
}

/** Starts a single server `srv0` on a free loopback port with the given routes. */
export function serve(routes: unknown[], extra: Record<string, unknown> = {}): Promise<Running> {
  return startHttp({ servers: { srv0: { listen: ["127.0.0.1:0"], routes, ...extra } } });
}
