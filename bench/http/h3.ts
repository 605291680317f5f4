/**
 * HTTP/3 load scenarios, Gatehouse beside Caddy 2.6.2, each serving the same JSON config (an
 * ECDSA P-256 certificate from a test CA, `protocols` h1 h2 h3) pinned to one core with
 * `taskset`, the load on the other:
 *
 * - `h3 respond`: the 13-byte `respond`;
 * - `h3 1 MiB file`: a 1 MiB file from `file_server`;
 * - `h2 respond` (h2load over TLS, the same servers): the HTTP/2 figure beside it;
 * - the floor of `h3 respond`: Deno's QUIC endpoint answering each request stream with one
 *   fixed frame, no HTTP/3 parsing and no routes.
 *
 * Debian's h2load has no HTTP/3, so the HTTP/3 load is `bench/http/h3_load.ts`: QUIC
 * connections over `Deno.connectQuic` with Gatehouse's own HTTP/3 client, `CONNECTIONS`
 * connections × `STREAMS` requests in flight. It is a JavaScript client on one core: its
 * requests/s are the client's limit as much as the server's, so the figure to read is the
 * server's CPU time per request (utime + stime of the server process over the run divided by
 * the requests). Every server's output is kept; one that ends during the run stops it.
 *
 *   deno run -A bench/http/h3.ts     # ROUNDS=3 DURATION=5 CONNECTIONS=4 STREAMS=8 SERVER_CORE=1 LOAD_CORE=0 ONLY=
 *
 * @module
 */
import {
  cpuSeconds,
  has,
  loadAverage,
  median,
  type Result,
  runRounds,
  type Scenario,
  type Server,
  start,
  stopServers,
  waitUp,
} from "./_proc.ts";

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 3);
const DURATION = Number(Deno.env.get("DURATION") ?? 5);
const CONNECTIONS = Number(Deno.env.get("CONNECTIONS") ?? 4);
const STREAMS = Number(Deno.env.get("STREAMS") ?? 8);
const SERVER_CORE = Deno.env.get("SERVER_CORE") ?? "1";
const LOAD_CORE = Deno.env.get("LOAD_CORE") ?? "0";
const ONLY = Deno.env.get("ONLY");
const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const LOAD = new URL("./h3_load.ts", import.meta.url).pathname;
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;
const dec = new TextDecoder();

function openssl(args: string[]): void {
  const out = new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" }).outputSync();
  if (!out.success) throw new Error(`openssl ${args[0]}: ${dec.decode(out.stderr)}`);
}

/** A port free for TCP and UDP both. */
function freePort(): number {
  for (;;) {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    l.close();
    try {
      Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port }).close();
      return port;
    } catch { /* UDP taken */ }
  }
}

const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-h3-" });
const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
openssl(["req", "-x509", ...ec, "-keyout", `${dir}/ca.key`, "-out", `${dir}/ca.pem`, "-days", "2"]
  .concat(["-subj", "/CN=Bench CA"]));
await Deno.writeTextFile(`${dir}/cert.ext`, "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
openssl(["req", ...ec, "-keyout", `${dir}/cert.key`, "-out", `${dir}/cert.csr`, "-subj", "/CN=l"]);
openssl(
  ["x509", "-req", "-in", `${dir}/cert.csr`, "-CA", `${dir}/ca.pem`, "-CAkey", `${dir}/ca.key`]
    .concat([
      "-CAcreateserial",
      "-days",
      "2",
      "-out",
      `${dir}/cert.pem`,
      "-extfile",
      `${dir}/cert.ext`,
    ]),
);
await Deno.mkdir(`${dir}/www`);
{
  const one = new Uint8Array(1 << 20);
  for (let i = 0; i < one.length; i += 65536) crypto.getRandomValues(one.subarray(i, i + 65536));
  await Deno.writeFile(`${dir}/www/1m.bin`, one);
}

function config(port: number): string {
  return JSON.stringify({
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    storage: { module: "file_system", root: `${dir}/storage-${port}` },
    apps: {
      tls: {
        certificates: { load_files: [{ certificate: `${dir}/cert.pem`, key: `${dir}/cert.key` }] },
      },
      http: {
        servers: {
          bench: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
            protocols: ["h1", "h2", "h3"],
            routes: [
              {
                match: [{ path: ["/"] }],
                handle: [{ handler: "static_response", body: "Hello, World!" }],
              },
              { handle: [{ handler: "file_server", root: `${dir}/www` }] },
            ],
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
const servers: Server[] = [];
{
  const port = freePort();
  const file = `${dir}/gh-${port}.json`;
  await Deno.writeTextFile(file, config(port));
  servers.push(
    await start({
      name: "gatehouse",
      cmd: [Deno.execPath(), "run", "-A", "--config", DENO_JSON, CLI, "run", "--config", file],
      port,
      core: SERVER_CORE,
      dir,
      env: {
        DENO_DIR: denoDir,
        HOME: dir,
        XDG_DATA_HOME: `${dir}/gh-data`,
        XDG_CONFIG_HOME: `${dir}/gh-config`,
      },
    }),
  );
}
if (has("caddy")) {
  const port = freePort();
  await Deno.writeTextFile(`${dir}/caddy.json`, config(port));
  servers.push(
    await start({
      name: "caddy 2.6.2",
      cmd: ["caddy", "run", "--config", `${dir}/caddy.json`],
      port,
      core: SERVER_CORE,
      dir,
      env: {
        HOME: dir,
        XDG_DATA_HOME: `${dir}/c-data`,
        XDG_CONFIG_HOME: `${dir}/c-config`,
        GOMAXPROCS: "1",
      },
    }),
  );
}
{
  // The floor: Deno's QUIC endpoint answering every request stream with one fixed HEADERS
  // and DATA frame (no parsing, no routes): what Deno's QUIC costs before any HTTP/3 work.
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/bare.ts`,
    `const ep = new Deno.QuicEndpoint({ hostname: "127.0.0.1", port: ${port} });
const l = ep.listen({ alpnProtocols: ["h3"], cert: Deno.readTextFileSync(${
      JSON.stringify(`${dir}/cert.pem`)
    }),
  key: Deno.readTextFileSync(${JSON.stringify(`${dir}/cert.key`)}), maxIdleTimeout: 30000 });
const body = new TextEncoder().encode("Hello, World!");
const answer = new Uint8Array([0x01, 0x03, 0x00, 0x00, 0xd9, 0x00, body.length, ...body]);
const keep = [];
Deno.listen({ hostname: "127.0.0.1", port: ${port} }); // for waitUp
for await (const inc of l) {
  (async () => {
    const c = await inc.accept();
    const ctl = (await c.createUnidirectionalStream()).getWriter();
    keep.push(ctl);
    await ctl.write(new Uint8Array([0x00, 0x04, 0x00]));
    for await (const bi of c.incomingBidirectionalStreams) {
      (async () => {
        const r = bi.readable.getReader({ mode: "byob" });
        await r.read(new Uint8Array(1024));
        const w = bi.writable.getWriter();
        await w.write(answer);
        await w.close();
        r.cancel().catch(() => {});
      })().catch(() => {});
    }
  })().catch(() => {});
}
`,
  );
  servers.push(
    await start({
      name: "bare Deno QUIC (floor)",
      cmd: [Deno.execPath(), "run", "-A", "--unstable-net", `${dir}/bare.ts`],
      port,
      core: SERVER_CORE,
      dir,
    }),
  );
}
for (const s of servers) await waitUp(s.port);
await new Promise((r) => setTimeout(r, 1000)); // the QUIC listeners take their certificate

const cpu = (s: Server) => s.pids().reduce((n, p) => n + cpuSeconds(p), 0);

async function h3(s: Server, path: string, seconds: number): Promise<Result> {
  const before = cpu(s);
  const out = await new Deno.Command("taskset", {
    args: [
      "-c",
      LOAD_CORE,
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      DENO_JSON,
      LOAD,
      "--port",
      String(s.port),
      "--path",
      path,
      "--ca",
      `${dir}/ca.pem`,
      "--connections",
      String(CONNECTIONS),
      "--streams",
      String(STREAMS),
      "--seconds",
      String(seconds),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const after = cpu(s);
  const text = dec.decode(out.stdout).trim().split("\n").at(-1) ?? "";
  let r: { requests: number; failures: number; rps: number; p99: number };
  try {
    r = JSON.parse(text);
  } catch {
    throw new Error(`h3_load: ${text}\n${dec.decode(out.stderr)}`);
  }
  return {
    rps: r.rps,
    p99ms: r.p99,
    cpuUs: r.requests ? (after - before) * 1e6 / r.requests : NaN,
    errors: r.failures,
  };
}

async function h2load(s: Server, seconds: number): Promise<Result> {
  const before = cpu(s);
  const out = dec.decode(
    (await new Deno.Command("taskset", {
      args: [
        "-c",
        LOAD_CORE,
        "h2load",
        "-D",
        String(seconds),
        "-c",
        String(CONNECTIONS),
        "-m",
        String(STREAMS),
        `https://127.0.0.1:${s.port}/`,
      ],
      stdout: "piped",
    }).output()).stdout,
  );
  const after = cpu(s);
  const done = Number(/requests: \d+ total, \d+ started, (\d+) done/.exec(out)?.[1] ?? 0);
  const failed = Number(/(\d+) failed/.exec(out)?.[1] ?? 0);
  return {
    rps: Number(/finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out)?.[1] ?? 0),
    p99ms: NaN,
    cpuUs: done ? (after - before) * 1e6 / done : NaN,
    errors: failed,
  };
}

const isFloor = (s: Server) => s.name.startsWith("bare");
const scenarios: Scenario[] = [
  { name: "h3 respond", run: (s: Server, t: number) => h3(s, "/", t) },
  { name: "h3 1 MiB file", run: (s: Server, t: number) => h3(s, "/1m.bin", t), skips: isFloor },
  { name: "h2 respond", run: h2load, skips: isFloor },
].filter((sc) => !ONLY || sc.name.includes(ONLY));
const results = new Map<string, Result[]>();
const loads = [`start ${loadAverage()}`];
try {
  await runRounds(scenarios, servers, { rounds: ROUNDS, duration: DURATION, results, loads });
} finally {
  const peak = await stopServers(servers);
  const fixed = (x: number, d: number) => Number.isNaN(x) ? "–" : x.toFixed(d);
  const lines = [
    `TLS 1.3, ECDSA P-256. Load on core ${LOAD_CORE} (HTTP/3: bench/http/h3_load.ts, ${CONNECTIONS} connections × ${STREAMS} streams; HTTP/2: h2load -c${CONNECTIONS} -m${STREAMS}), servers on core ${SERVER_CORE}; ${ROUNDS} rounds × ${DURATION} s, alternating, medians. Load average: ${
      loads.join("; ")
    }.`,
    "",
    "| scenario | server | req/s | p99 ms | CPU µs/req | errors | peak RSS MiB |",
    "|---|---|---:|---:|---:|---:|---:|",
  ];
  for (const sc of scenarios) {
    for (const s of servers) {
      const rs = results.get(`${sc.name}|${s.name}`);
      if (!rs?.length) continue;
      lines.push(
        `| ${sc.name} | ${s.name} | ${fixed(median(rs.map((r) => r.rps)), 0)} | ${
          fixed(median(rs.map((r) => r.p99ms)), 2)
        } | ${fixed(median(rs.map((r) => r.cpuUs)), 1)} | ${
          rs.reduce((n, r) => n + r.errors, 0)
        } | ${((peak.get(s.name) ?? 0) / 1024).toFixed(0)} |`,
      );
    }
  }
  console.log(lines.join("\n"));
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
