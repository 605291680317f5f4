/**
 * HTTP/2 rapid reset (CVE-2023-44487) against both listener engines: one connection sends
 * `PAIRS` HEADERS+RST_STREAM(CANCEL) pairs as fast as it can, while another client goes on
 * asking for a page. Servers: the `deno` engine over TLS (h2 by ALPN), the `node` engine over
 * TLS and as h2c, each a `gatehouse run` process pinned to `SERVER_CORE` with `taskset`.
 *
 * Reported per server:
 * - server CPU per burst: one flood on a fresh connection, `ROUNDS` times; utime + stime from
 *   `/proc/<pid>/stat` while the server is idle before the flood and once it is idle again
 *   after (10 ms ticks);
 * - what the first flood got: how many streams the server took (its GOAWAY's last stream id),
 *   the GOAWAY's error code, whether the server closed the connection;
 * - the other client's request times, p50 / p99 / max: at rest for 2 s (`baseline`), from the
 *   start to the end of each flood (`in bursts`), around a normal client's new connection with
 *   one request (the control: what any new connection costs the others), and while floods run
 *   back to back on new connections for `DURING` seconds (with the server's CPU per flood
 *   then). The other client
 *   is `fetch`: HTTP/2 on its own TLS connection, HTTP/1.1 on the h2c listener.
 *
 *   taskset -c 0 deno run -A bench/http/h2_rapid_reset.ts   # PAIRS=10000 ROUNDS=10 DURING=3
 *
 * @module
 */
import { cpuSeconds, freePort, gone, type Server, start, waitUp } from "./_proc.ts";
import {
  type FloodResult,
  FRAME,
  frame,
  getBlock,
  rapidReset,
  rapidResetBatches,
  RawH2,
  type RawTarget,
} from "../../tests/server/fixtures/h2_raw.ts";

const PAIRS = Number(Deno.env.get("PAIRS") ?? 10_000);
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 10);
const DURING = Number(Deno.env.get("DURING") ?? 3);
const SERVER_CORE = Deno.env.get("SERVER_CORE") ?? "1";
const ONLY = Deno.env.get("ONLY");
const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const dec = new TextDecoder();

function openssl(args: string[]): void {
  const out = new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" }).outputSync();
  if (!out.success) throw new Error(`openssl ${args[0]}: ${dec.decode(out.stderr)}`);
}

const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-h2-reset-" });
const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
openssl(["req", "-x509", ...ec, "-keyout", `${dir}/ca.key`, "-out", `${dir}/ca.pem`, "-days", "2"]
  .concat(["-subj", "/CN=Bench CA"]));
await Deno.writeTextFile(`${dir}/cert.ext`, "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
openssl(["req", ...ec, "-keyout", `${dir}/cert.key`, "-out", `${dir}/cert.csr`, "-subj", "/CN=x"]);
openssl(
  ["x509", "-req", "-in", `${dir}/cert.csr`, "-CA", `${dir}/ca.pem`, "-CAkey", `${dir}/ca.key`]
    .concat(["-CAcreateserial", "-days", "2", "-out", `${dir}/cert.pem`])
    .concat(["-extfile", `${dir}/cert.ext`]),
);
const ca = await Deno.readTextFile(`${dir}/ca.pem`);

interface Kind {
  name: string;
  engine: "deno" | "node";
  tls: boolean;
}
const ALL_KINDS: Kind[] = [
  { name: "deno engine, h2 (TLS)", engine: "deno", tls: true },
  { name: "node engine, h2 (TLS)", engine: "node", tls: true },
  { name: "node engine, h2c", engine: "node", tls: false },
];
const KINDS = ALL_KINDS.filter((k) => !ONLY || k.name.includes(ONLY));

function config(port: number, k: Kind): string {
  return JSON.stringify({
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    storage: { module: "file_system", root: `${dir}/storage-${port}` },
    apps: {
      ...(k.tls
        ? {
          tls: {
            certificates: {
              load_files: [{ certificate: `${dir}/cert.pem`, key: `${dir}/cert.key` }],
            },
          },
        }
        : {}),
      http: {
        servers: {
          bench: {
            listen: [`127.0.0.1:${port}`],
            listener_engine: k.engine,
            automatic_https: { disable: true },
            ...(k.tls ? { tls_connection_policies: [{}] } : { protocols: ["h1", "h2c"] }),
            routes: [{ handle: [{ handler: "static_response", body: "Hello, World!" }] }],
          },
        },
      },
    },
  });
}

const denoDir = JSON.parse(
  dec.decode(
    new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).outputSync()
      .stdout,
  ),
).denoDir;
const ghEnv = {
  DENO_DIR: denoDir,
  HOME: dir,
  XDG_DATA_HOME: `${dir}/gh-data`,
  XDG_CONFIG_HOME: `${dir}/gh-config`,
};

const client = Deno.createHttpClient({ caCerts: [ca] });

/** One request of the other client: its time in ms (Infinity when it failed or took > 15 s). */
async function probe(origin: string): Promise<number> {
  const t0 = performance.now();
  try {
    const r = await fetch(`${origin}/page`, { client, signal: AbortSignal.timeout(15_000) });
    await r.text();
    return r.ok ? performance.now() - t0 : Infinity;
  } catch {
    return Infinity;
  }
}

/** The other client for `ms`: requests one after another, 10 ms apart; their times. */
async function probes(origin: string, ms: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    out.push(await probe(origin));
    await new Promise((r) => setTimeout(r, 10));
  }
  return out;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

const ms = (x: number) => (x === Infinity ? "timeout" : x.toFixed(1));

/** Waits until the server's CPU time stops moving (two equal readings 200 ms apart). */
async function idle(pid: number): Promise<number> {
  let last = cpuSeconds(pid);
  for (let i = 0; i < 150; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const now = cpuSeconds(pid);
    if (now === last) return now;
    last = now;
  }
  return last;
}

/** A normal client's connection: one GET, its answer, closed (the control for a flood). */
async function oneRequest(t: RawTarget): Promise<void> {
  const c = await RawH2.open(t);
  try {
    const block = getBlock(t.ca ? "https" : "http", `localhost:${t.port}`);
    await c.send(frame(FRAME.HEADERS, 0x5, 1, block));
    await c.next((f) => f.type === FRAME.HEADERS && f.stream === 1);
  } finally {
    c.close();
  }
}

/** The other client's request times while `work` runs (at least one request). */
async function whileRunning<T>(origin: string, work: Promise<T>, into: number[]): Promise<T> {
  let done = false;
  const w = work.finally(() => (done = true));
  do into.push(await probe(origin)); while (!done);
  return await w;
}

function describe(r: FloodResult): string {
  const took = r.goaway ? `${Math.ceil(r.goaway.lastStream / 2)}` : "?";
  const code = r.goaway ? `0x${r.goaway.code.toString(16)}` : "none";
  return `streams taken ${took}, GOAWAY ${code}, ${r.responses} answers, ` +
    `connection ${r.closed ? "closed by the server" : "left open"}`;
}

const lines: string[] = [];
for (const k of KINDS) {
  const port = freePort();
  const file = `${dir}/gh-${port}.json`;
  await Deno.writeTextFile(file, config(port, k));
  const srv: Server = await start({
    name: k.name,
    cmd: [Deno.execPath(), "run", "-A", CLI, "run", "--config", file],
    port,
    core: SERVER_CORE,
    dir,
    env: ghEnv,
  });
  try {
    await waitUp(port);
    const origin = `${k.tls ? "https://localhost" : "http://127.0.0.1"}:${port}`;
    const target = { port, ca: k.tls ? ca : undefined };
    // built once, so that the flood costs this process only its writes
    const batches = rapidResetBatches(target, PAIRS);
    await probes(origin, 500); // warm
    const base = await probes(origin, 2000);
    const bursts: number[] = [];
    const taken: string[] = [];
    const during: number[] = [];
    const control: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await idle(srv.child.pid);
      await whileRunning(origin, oneRequest(target), control);
      const before = await idle(srv.child.pid);
      // the other client's requests from the flood's start until its end
      const r = await whileRunning(origin, rapidReset(target, batches), during);
      const after = await idle(srv.child.pid);
      bursts.push((after - before) * 1000);
      taken.push(describe(r));
      const why = await gone(srv);
      if (why) throw new Error(why);
    }
    // floods back to back on new connections while the other client asks
    let floods = 0;
    let stop = false;
    const before = await idle(srv.child.pid);
    const attacking = (async () => {
      while (!stop) {
        await rapidReset(target, batches, 500).catch(() => {});
        floods++;
      }
    })();
    const sustained = await probes(origin, DURING * 1000);
    stop = true;
    await attacking;
    const after = await idle(srv.child.pid);
    const why = await gone(srv);
    if (why) throw new Error(why);
    const lat = (xs: number[]) =>
      `p50 ${ms(pct(xs, 50))} ms, p99 ${ms(pct(xs, 99))} ms, max ${ms(Math.max(...xs))} ms ` +
      `(${xs.length} requests)`;
    const sorted = [...bursts].sort((a, b) => a - b);
    lines.push(
      `${k.name}:`,
      `  server CPU per burst: ${bursts.map((b) => b.toFixed(0)).join(", ")} ms ` +
        `(median ${sorted[Math.floor(sorted.length / 2)].toFixed(0)}, max ${
          sorted[sorted.length - 1].toFixed(0)
        })`,
      `  first burst: ${taken[0]}`,
      `  latency baseline:  ${lat(base)}`,
      `  latency in bursts: ${lat(during)}`,
      `  latency around a normal new connection (one request): ${lat(control)}`,
      `  back to back for ${DURING} s: ${lat(sustained)}; ${floods} floods, server CPU ${
        ((after - before) * 1000 / Math.max(1, floods)).toFixed(1)
      } ms per flood`,
    );
    console.log(lines.slice(-7).join("\n"));
  } finally {
    srv.child.kill("SIGTERM");
    await srv.child.status;
  }
}
client.close();
console.log(`\n${PAIRS} pairs per flood; ${new Date().toISOString()}\n${lines.join("\n")}`);
await Deno.remove(dir, { recursive: true });
