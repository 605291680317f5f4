/**
 * The same template files served by Caddy 2.6.2 (the oracle, when installed) and by
 * Gatehouse, each with `templates` before `file_server` over one directory; every request
 * goes to both, and the answers (status, body, the error log's message) are compared.
 */
import { freePort } from "../../fixtures/helpers.ts";
import { startHttp } from "../harness.ts";

/** True when the `caddy` binary runs here. */
export function caddyInstalled(): boolean {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** One answer. */
export interface Answer {
  status: number;
  body: string;
  headers: Headers;
  /** The error log's message for the request (a template that failed). */
  error?: string;
}

/** One request to send to both servers. */
export interface Ask {
  path: string;
  method?: string;
  headers?: Record<string, string>;
}

/** The routes both servers run over `root`. */
export function routes(root: string, extra: Record<string, unknown> = {}): unknown[] {
  return [{
    handle: [
      { handler: "templates", file_root: root, ...extra },
      { handler: "file_server", root },
    ],
  }];
}

async function ask(base: string, a: Ask): Promise<Answer> {
  const res = await fetch(base + a.path, { method: a.method ?? "GET", headers: a.headers });
  let body = "";
  try {
    body = await res.text();
  } catch {
    // Caddy 2.6.2 answers a failed template with the file's Content-Length and no body
    body = "";
  }
  return { status: res.status, body, headers: res.headers };
}

interface LogLine {
  logger?: string;
  msg?: string;
  request?: { uri?: string };
}

function errorsByUri(lines: LogLine[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const l of lines) {
    if (l.logger?.startsWith("http.log.error") && l.request?.uri && l.msg) {
      m.set(l.request.uri, l.msg);
    }
  }
  return m;
}

/** Runs Caddy over `root` with `routes`, sends `asks`, returns its answers. */
export async function askCaddy(
  root: string,
  routeList: unknown[],
  asks: Ask[],
  env: Record<string, string> = {},
): Promise<Answer[]> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-tpl-caddy-" });
  const port = freePort();
  const log = `${dir}/log.json`;
  const config = {
    admin: { disabled: true },
    logging: {
      logs: {
        default: { writer: { output: "file", filename: log }, encoder: { format: "json" } },
      },
    },
    apps: {
      http: {
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            routes: routeList,
          },
        },
      },
    },
  };
  await Deno.writeTextFile(`${dir}/caddy.json`, JSON.stringify(config));
  const child = new Deno.Command("caddy", {
    args: ["run", "--config", `${dir}/caddy.json`],
    stdout: "null",
    stderr: "null",
    cwd: root,
    env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, ...env },
  }).spawn();
  try {
    const end = Date.now() + 10_000;
    for (;;) {
      try {
        (await Deno.connect({ hostname: "127.0.0.1", port })).close();
        break;
      } catch {
        if (Date.now() > end) throw new Error("caddy did not start");
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    const out: Answer[] = [];
    for (const a of asks) out.push(await ask(`http://127.0.0.1:${port}`, a));
    child.kill("SIGTERM");
    await child.status;
    const lines = (await Deno.readTextFile(log).catch(() => "")).split("\n").filter(Boolean)
      .map((l) => JSON.parse(l) as LogLine);
    const errs = errorsByUri(lines);
    asks.forEach((a, i) => {
      const e = errs.get(a.path);
      if (e) out[i].error = e;
    });
    return out;
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* stopped */ }
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Runs Gatehouse over `root` with `routes`, sends `asks`, returns its answers. */
export async function askGatehouse(routeList: unknown[], asks: Ask[]): Promise<Answer[]> {
  const srv = await startHttp({ servers: { s: { listen: ["127.0.0.1:0"], routes: routeList } } });
  try {
    const out: Answer[] = [];
    for (const a of asks) out.push(await ask(srv.url(), a));
    // the error log names no request here: its records follow the failed requests in order
    const errs = (await srv.logs() as LogLine[])
      .filter((l) =>
        l.logger?.startsWith("http.log.error") && (l as { status?: number }).status! >= 500
      )
      .map((l) => l.msg!);
    for (const a of out) if (a.status >= 500) a.error = errs.shift();
    return out;
  } finally {
    await srv.stop();
  }
}

/** Writes `files` (name → content) under a new temp directory. */
export async function writeTree(files: Record<string, string>): Promise<string> {
  const root = await Deno.makeTempDir({ prefix: "gatehouse-tpl-" });
  for (const [name, text] of Object.entries(files)) {
    const path = `${root}/${name}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
  return root;
}
