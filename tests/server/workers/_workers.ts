/**
 * Helpers of the worker-process tests: requests over a new connection each (the kernel then
 * spreads them over the workers), the worker that answered, the workers the admin API lists.
 */
import { call } from "../fixtures/helpers.ts";

/** An answer, with the worker that sent it (its `X-Worker` header). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  worker: string;
}

const dec = new TextDecoder();

/** One request on a new connection (`Connection: close`), read to its end. */
export async function hit(port: number, path = "/", headers: Record<string, string> = {}): Promise<
  Answer
> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    await conn.write(
      new TextEncoder().encode(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}Connection: close\r\n\r\n`,
      ),
    );
    const text = dec.decode(await new Response(conn.readable).arrayBuffer());
    return parse(text);
  } finally {
    try {
      conn.close();
    } catch { /* closed by the reader */ }
  }
}

/** Parses one HTTP/1.1 answer (`Content-Length` or a close-delimited body). */
export function parse(text: string): Answer {
  const end = text.indexOf("\r\n\r\n");
  const head = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(":");
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = text.slice(end + 4);
  if (headers["content-length"]) body = body.slice(0, Number(headers["content-length"]));
  return {
    status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0])?.[1] ?? 0),
    headers,
    body,
    worker: headers["x-worker"] ?? "",
  };
}

/**
 * Requests on new connections until `n` workers answered (at most `tries`); the body each
 * worker sent, by worker.
 */
export async function answersByWorker(
  port: number,
  n = 2,
  path = "/",
  tries = 400,
): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  for (let i = 0; i < tries && seen.size < n; i++) {
    const a = await hit(port, path);
    seen.set(a.worker, a.body);
  }
  return seen;
}

/** A worker as `GET /workers` lists it. */
export interface Worker {
  worker: number;
  pid: number;
  restarts: number;
  serving: boolean;
}

/** The workers the admin API lists. */
export async function workers(base: string): Promise<Worker[]> {
  const r = await call(base, "GET", "/workers");
  if (r.status !== 200) throw new Error(`GET /workers: ${r.status} ${r.body}`);
  return JSON.parse(r.body);
}

/** The parent process of `pid` (from `/proc/<pid>/stat`). */
export function parentOf(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** The child processes of `pid`. */
export function childrenOf(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A route answering `body` with the worker's number in `X-Worker`. */
export function workerRoute(
  body: string,
  match?: Record<string, unknown>[],
): Record<string, unknown> {
  return {
    ...(match ? { match } : {}),
    handle: [
      { handler: "headers", response: { set: { "X-Worker": ["{env.GATEHOUSE_WORKER}"] } } },
      { handler: "static_response", body },
    ],
  };
}

/** A config with one server on `port` answering `body` (and the worker) on every path. */
export function siteWith(
  port: number,
  body: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    logging: { logs: { default: { writer: { output: "discard" } } } },
    apps: {
      http: {
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            routes: [workerRoute(body)],
          },
        },
      },
    },
    ...extra,
  };
}

/** Runs `wrk` against `url`; its requests, failures (socket errors, non-2xx/3xx) and output. */
export async function wrk(
  url: string,
  { seconds = 3, connections = 16 } = {},
): Promise<{ requests: number; failures: number; output: string }> {
  const out = await new Deno.Command("wrk", {
    args: ["-t1", `-c${connections}`, `-d${seconds}s`, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const output = dec.decode(out.stdout) + dec.decode(out.stderr);
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? 0);
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
    output,
  );
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  const failures = non2xx + (errors ? errors.slice(1).reduce((a, b) => a + Number(b), 0) : 0);
  return { requests, failures, output };
}

/** What one HTTPS request over `openssl s_client` shows: the chain served, and the answer. */
export interface TlsAnswer {
  /** The certificates the server sent, leaf first (PEM). */
  chain: string[];
  /** The leaf's serial (hex, as openssl prints it). */
  serial: string;
  worker: string;
  status: number;
  body: string;
}

/** One HTTPS request for `name` on a new connection, through `openssl s_client -showcerts`. */
export async function tlsHit(port: number, name: string, path = "/"): Promise<TlsAnswer> {
  const child = new Deno.Command("openssl", {
    args: [
      "s_client",
      "-connect",
      `127.0.0.1:${port}`,
      "-servername",
      name,
      "-showcerts",
      "-ign_eof",
      "-alpn",
      "http/1.1",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(
    new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: ${name}\r\nConnection: close\r\n\r\n`),
  );
  await w.close();
  const out = dec.decode((await child.output()).stdout);
  const chain = [...out.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)]
    .map((m) => m[0] + "\n");
  const at = out.indexOf("HTTP/1.1 ");
  const answer = at >= 0 ? parse(out.slice(at).replace(/\r?\n(closed|read R BLOCK)\s*$/, "")) : {
    status: 0,
    body: "",
    worker: "",
  };
  let serial = "";
  if (chain[0]) {
    const x = new Deno.Command("openssl", {
      args: ["x509", "-noout", "-serial"],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const xw = x.stdin.getWriter();
    await xw.write(new TextEncoder().encode(chain[0]));
    await xw.close();
    serial = /serial=([0-9A-F]+)/.exec(dec.decode((await x.output()).stdout))?.[1] ?? "";
  }
  return { chain, serial, worker: answer.worker, status: answer.status, body: answer.body };
}

/** HTTPS requests on new connections until `n` workers answered; the answer of each. */
export async function tlsAnswersByWorker(
  port: number,
  name: string,
  n = 2,
  tries = 200,
): Promise<Map<string, TlsAnswer>> {
  const seen = new Map<string, TlsAnswer>();
  for (let i = 0; i < tries && seen.size < n; i++) {
    const a = await tlsHit(port, name);
    if (a.status) seen.set(a.worker, a);
  }
  return seen;
}
