/**
 * HTTPS load scenarios, Gatehouse side by side with Caddy 2.6.2 and nginx (when installed),
 * every server with ECDSA P-256 certificates from one test CA, TLS 1.3, each pinned to one core
 * with `taskset`, the load on the other; a bare `Deno.serve` with the same certificate is the
 * floor. Gatehouse runs three ways: the `deno` engine with one certificate (the listener holds
 * it), the `deno` engine with a second certificate for another name (the certificate is then
 * chosen per server name by Deno's resolver), and the `node` engine.
 *
 * - `new connections`: wrk with `Connection: close`, so every request opens a new TLS
 *   connection. wrk keeps the session of its previous connection (OpenSSL's `SSL_clear`) and
 *   offers it, so against a server that resumes sessions most of these handshakes are resumed
 *   ones (the `resumes` column says which servers do); this is what returning clients cost.
 * - `full handshakes`: `openssl s_time -new` in parallel (no session is ever offered): every
 *   connection is a full handshake. The client side costs more than the server side here, so
 *   the rate is the load generator's; the server's CPU µs per handshake is the figure.
 * - `keep-alive respond`: the 13-byte `respond` over established TLS connections (wrk).
 *
 * Reports requests/s, p99 latency (wrk), server CPU time per request or handshake (utime +
 * stime over the run divided by the count) and the peak resident set of the whole run. Every
 * server's output is kept; one that ends during the run stops it with how it ended.
 *
 *   deno run -A bench/http/https.ts     # ROUNDS=2 DURATION=5 CONNECTIONS=32 SERVER_CORE=1 ONLY=
 *
 * @module
 */
import {
  cpuSeconds,
  freePort,
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

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 2);
const DURATION = Number(Deno.env.get("DURATION") ?? 5);
const CONNECTIONS = Number(Deno.env.get("CONNECTIONS") ?? 32);
const SERVER_CORE = Deno.env.get("SERVER_CORE") ?? "1";
const LOAD_CORE = Deno.env.get("LOAD_CORE") ?? "0";
const ONLY = Deno.env.get("ONLY");
const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const dec = new TextDecoder();

function openssl(args: string[]): void {
  const out = new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" }).outputSync();
  if (!out.success) throw new Error(`openssl ${args[0]}: ${dec.decode(out.stderr)}`);
}

const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-https-" });
// a CA, a certificate for localhost and 127.0.0.1, and one for another name
const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
openssl(["req", "-x509", ...ec, "-keyout", `${dir}/ca.key`, "-out", `${dir}/ca.pem`, "-days", "2"]
  .concat(["-subj", "/CN=Bench CA"]));
for (const [name, san] of [["cert", "DNS:localhost,IP:127.0.0.1"], ["other", "DNS:other.test"]]) {
  await Deno.writeTextFile(`${dir}/${name}.ext`, `subjectAltName=${san}\n`);
  openssl(["req", ...ec, "-keyout", `${dir}/${name}.key`, "-out", `${dir}/${name}.csr`]
    .concat(["-subj", `/CN=${name}`]));
  openssl(
    ["x509", "-req", "-in", `${dir}/${name}.csr`, "-CA", `${dir}/ca.pem`, "-CAkey"]
      .concat([`${dir}/ca.key`, "-CAcreateserial", "-days", "2", "-out", `${dir}/${name}.pem`])
      .concat(["-extfile", `${dir}/${name}.ext`]),
  );
}
const cert = `${dir}/cert.pem`;
const key = `${dir}/cert.key`;

function config(port: number, o: { engine?: "node"; second?: boolean } = {}): string {
  const load = [{ certificate: cert, key }];
  if (o.second) load.push({ certificate: `${dir}/other.pem`, key: `${dir}/other.key` });
  return JSON.stringify({
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    storage: { module: "file_system", root: `${dir}/storage-${port}` },
    apps: {
      tls: { certificates: { load_files: load } },
      http: {
        servers: {
          bench: {
            listen: [`127.0.0.1:${port}`],
            ...(o.engine ? { listener_engine: o.engine } : {}),
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
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
const servers: Server[] = [];
const gatehouses = [
  { name: "gatehouse", o: {} },
  { name: "gatehouse (per-name certificates)", o: { second: true } },
  { name: "gatehouse (node engine)", o: { engine: "node" as const } },
];
for (const g of gatehouses) {
  const port = freePort();
  const file = `${dir}/gh-${port}.json`;
  await Deno.writeTextFile(file, config(port, g.o));
  servers.push(
    await start({
      name: g.name,
      cmd: [Deno.execPath(), "run", "-A", CLI, "run", "--config", file],
      port,
      core: SERVER_CORE,
      dir,
      env: ghEnv,
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
if (has("nginx")) {
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/nginx.conf`,
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  server {
    listen 127.0.0.1:${port} ssl;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    ssl_protocols TLSv1.2 TLSv1.3;
    keepalive_requests 1000000;
    location / { default_type text/plain; return 200 "Hello, World!"; }
  }
}
`,
  );
  servers.push(
    await start({
      name: "nginx",
      cmd: ["nginx", "-c", `${dir}/nginx.conf`, "-p", dir],
      port,
      core: SERVER_CORE,
      dir,
    }),
  );
}
{
  // The floor: a bare Deno.serve with the same certificate, answering from memory.
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/bare.ts`,
    `Deno.serve({ hostname: "127.0.0.1", port: ${port}, onListen() {},
  cert: Deno.readTextFileSync(${JSON.stringify(cert)}),
  key: Deno.readTextFileSync(${JSON.stringify(key)}) }, () => new Response("Hello, World!"));`,
  );
  servers.push(
    await start({
      name: "bare Deno.serve",
      cmd: [Deno.execPath(), "run", "-A", `${dir}/bare.ts`],
      port,
      core: SERVER_CORE,
      dir,
    }),
  );
}
for (const s of servers) await waitUp(s.port);

/** Whether a server resumes a TLS session a client offers (two openssl handshakes). */
async function resumes(s: Server): Promise<boolean> {
  const once = async (sess: string[]) => {
    const p = new Deno.Command("openssl", {
      args: ["s_client", "-connect", `127.0.0.1:${s.port}`, "-servername", "localhost", ...sess],
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const w = p.stdin.getWriter();
    await new Promise((r) => setTimeout(r, 300)); // TLS 1.3 tickets follow the handshake
    await w.close();
    return dec.decode((await p.output()).stdout);
  };
  await once(["-sess_out", `${dir}/sess`]);
  return /^Reused,/m.test(await once(["-sess_in", `${dir}/sess`]));
}
const resumption = new Map<string, boolean>();
for (const s of servers) resumption.set(s.name, await resumes(s));

function latency(s: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(s);
  if (!m) return NaN;
  return m[2] === "us" ? Number(m[1]) / 1000 : m[2] === "s" ? Number(m[1]) * 1000 : Number(m[1]);
}

const cpu = (s: Server) => s.pids().reduce((n, p) => n + cpuSeconds(p), 0);

async function wrk(s: Server, close: boolean, seconds: number): Promise<Result> {
  const args = ["-c", LOAD_CORE, "wrk", "-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency"];
  if (close) args.push("-H", "Connection: close");
  args.push(`https://127.0.0.1:${s.port}/`);
  const before = cpu(s);
  const out = dec.decode(
    (await new Deno.Command("taskset", { args, stdout: "piped" }).output()).stdout,
  );
  const after = cpu(s);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p99ms: latency(/99%\s+(\S+)/.exec(out)?.[1] ?? ""),
    cpuUs: requests ? (after - before) * 1e6 / requests : NaN,
    errors: (sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0) +
      Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
  };
}

/** `openssl s_time -new` × CONNECTIONS/2 processes: full handshakes only. */
async function sTime(s: Server, seconds: number): Promise<Result> {
  const before = cpu(s);
  const runs = await Promise.all(
    Array.from({ length: Math.max(1, CONNECTIONS / 2) }, () =>
      new Deno.Command("taskset", {
        args: [
          "-c",
          LOAD_CORE,
          "openssl",
          "s_time",
          "-connect",
          `127.0.0.1:${s.port}`,
          "-new",
          "-time",
          String(seconds),
          "-www",
          "/",
        ], // deno-fmt-ignore
        stdout: "piped",
        stderr: "null",
      }).output()),
  );
  const after = cpu(s);
  const count = runs.reduce(
    (n, r) => n + Number(/(\d+) connections in [\d.]+s/.exec(dec.decode(r.stdout))?.[1] ?? 0),
    0,
  );
  return {
    rps: count / seconds,
    p99ms: NaN,
    cpuUs: count ? (after - before) * 1e6 / count : NaN,
    errors: runs.filter((r) => !r.success).length,
  };
}

const scenarios: Scenario[] = [
  { name: "new connections", run: (s: Server, t: number) => wrk(s, true, t) },
  { name: "full handshakes", run: sTime },
  { name: "keep-alive respond", run: (s: Server, t: number) => wrk(s, false, t) },
].filter((sc) => !ONLY || sc.name.includes(ONLY));
const results = new Map<string, Result[]>();
const loads = [`start ${loadAverage()}`];
try {
  await runRounds(scenarios, servers, { rounds: ROUNDS, duration: DURATION, results, loads });
} finally {
  const peak = await stopServers(servers);
  const fixed2 = (x: number) => Number.isNaN(x) ? "–" : x.toFixed(2);
  const lines = [
    `HTTPS, TLS 1.3, ECDSA P-256. Load on core ${LOAD_CORE} (wrk -t1 -c${CONNECTIONS}, or ${
      Math.max(1, CONNECTIONS / 2)
    } openssl s_time -new), servers on core ${SERVER_CORE}; ${ROUNDS} rounds × ${DURATION} s, alternating, medians. Load average: ${
      loads.join("; ")
    }.`,
    "",
    "| scenario | server | resumes | req/s | p99 ms | CPU µs/req | errors |",
    "|---|---|---|---:|---:|---:|---:|",
  ];
  for (const sc of scenarios) {
    for (const s of servers) {
      const rs = results.get(`${sc.name}|${s.name}`);
      if (!rs) continue;
      lines.push(
        `| ${sc.name} | ${s.name} | ${resumption.get(s.name) ? "yes" : "no"} | ${
          median(rs.map((r) => r.rps)).toFixed(0)
        } | ${fixed2(median(rs.map((r) => r.p99ms)))} | ${
          median(rs.map((r) => r.cpuUs)).toFixed(1)
        } | ${rs.reduce((n, r) => n + r.errors, 0)} |`,
      );
    }
  }
  lines.push("", "Peak RSS over the whole run (VmHWM, MiB):");
  for (const s of servers) lines.push(`- ${s.name}: ${(peak.get(s.name)! / 1024).toFixed(1)}`);
  console.log(lines.join("\n"));
  await Deno.remove(dir, { recursive: true });
}
