/**
 * HTTPS load scenarios, Gatehouse (both listener engines) side by side with Caddy 2.6.2 and
 * nginx (when installed), every server with the same ECDSA P-256 certificate, TLS 1.3, each
 * pinned to one core with `taskset`, wrk on the other; a bare `Deno.serve` with that
 * certificate is the floor:
 *
 * - `new handshakes`: `Connection: close` on every request, so each request is a full TLS
 *   handshake (wrk does not resume sessions): requests/s = handshakes/s, CPU µs per handshake.
 * - `keep-alive respond`: the 13-byte `respond` over established TLS connections.
 *
 * Reports requests/s, p99 latency, server CPU time per request (utime+stime over the run
 * divided by requests) and the peak resident set of the whole run.
 *
 *   deno run -A bench/http/https.ts          # ROUNDS=2 DURATION=5 CONNECTIONS=32 SERVER_CORE=1
 *
 * @module
 */

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 2);
const DURATION = Number(Deno.env.get("DURATION") ?? 5);
const CONNECTIONS = Number(Deno.env.get("CONNECTIONS") ?? 32);
const SERVER_CORE = Deno.env.get("SERVER_CORE") ?? "1";
const LOAD_CORE = Deno.env.get("LOAD_CORE") ?? "0";
const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const TICK = 100; // USER_HZ

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const p = (l.addr as Deno.NetAddr).port;
  l.close();
  return p;
}

function has(cmd: string): boolean {
  return new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`], stdout: "null" })
    .outputSync().success;
}

function proc(pid: number, file: string, re: RegExp): number {
  try {
    const m = re.exec(Deno.readTextFileSync(`/proc/${pid}/${file}`));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function cpuTicks(pid: number): number {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

function children(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/)
      .filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function waitUp(port: number): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`port ${port} never opened`);
}

interface Server {
  name: string;
  port: number;
  child: Deno.ChildProcess;
  pids(): number[];
}

function start(name: string, cmd: string[], port: number, env: Record<string, string> = {}) {
  const child = new Deno.Command("taskset", {
    args: ["-c", SERVER_CORE, ...cmd],
    stdout: "null",
    stderr: "null",
    env,
  }).spawn();
  return { name, port, child, pids: () => [child.pid, ...children(child.pid)] };
}

const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-https-" });
const cert = `${dir}/cert.pem`;
const key = `${dir}/key.pem`;
const made = new Deno.Command("openssl", {
  args: [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    key,
    "-out",
    cert,
    "-days",
    "2",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
  ],
  stdout: "null",
  stderr: "null",
}).outputSync();
if (!made.success) throw new Error("openssl could not make the benchmark certificate");

function config(port: number, engine: "deno" | "node"): string {
  return JSON.stringify({
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    storage: { module: "file_system", root: `${dir}/storage-${port}` },
    apps: {
      tls: { certificates: { load_files: [{ certificate: cert, key }] } },
      http: {
        servers: {
          bench: {
            listen: [`127.0.0.1:${port}`],
            ...(engine === "node" ? { listener_engine: "node" } : {}),
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
  new TextDecoder().decode(
    new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).outputSync()
      .stdout,
  ),
).denoDir;
const env = {
  DENO_DIR: denoDir,
  HOME: dir,
  XDG_DATA_HOME: `${dir}/gh-data`,
  XDG_CONFIG_HOME: `${dir}/gh-config`,
};
const servers: Server[] = [];
for (const engine of ["deno", "node"] as const) {
  const port = freePort();
  await Deno.writeTextFile(`${dir}/gh-${engine}.json`, config(port, engine));
  servers.push(
    start(
      engine === "deno" ? "gatehouse" : "gatehouse (node engine)",
      [Deno.execPath(), "run", "-A", CLI, "run", "--config", `${dir}/gh-${engine}.json`],
      port,
      env,
    ),
  );
}
if (has("caddy")) {
  const port = freePort();
  await Deno.writeTextFile(`${dir}/caddy.json`, config(port, "deno"));
  servers.push(
    start("caddy 2.6.2", ["caddy", "run", "--config", `${dir}/caddy.json`], port, {
      HOME: dir,
      XDG_DATA_HOME: `${dir}/c-data`,
      XDG_CONFIG_HOME: `${dir}/c-config`,
      GOMAXPROCS: "1",
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
  servers.push(start("nginx", ["nginx", "-c", `${dir}/nginx.conf`, "-p", dir], port));
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
  servers.push(start("bare Deno.serve", [Deno.execPath(), "run", "-A", `${dir}/bare.ts`], port));
}
for (const s of servers) await waitUp(s.port);

interface Result {
  rps: number;
  p99ms: number;
  cpuUs: number;
  errors: number;
}

function latency(s: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(s);
  if (!m) return NaN;
  return m[2] === "us" ? Number(m[1]) / 1000 : m[2] === "s" ? Number(m[1]) * 1000 : Number(m[1]);
}

async function wrk(s: Server, close: boolean, seconds = DURATION): Promise<Result> {
  const args = ["-c", LOAD_CORE, "wrk", "-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency"];
  if (close) args.push("-H", "Connection: close");
  args.push(`https://127.0.0.1:${s.port}/`);
  const before = s.pids().reduce((n, p) => n + cpuTicks(p), 0);
  const out = new TextDecoder().decode(
    (await new Deno.Command("taskset", { args, stdout: "piped" }).output()).stdout,
  );
  const after = s.pids().reduce((n, p) => n + cpuTicks(p), 0);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p99ms: latency(/99%\s+(\S+)/.exec(out)?.[1] ?? ""),
    cpuUs: requests ? ((after - before) / TICK) * 1e6 / requests : NaN,
    errors: (sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0) +
      Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
  };
}

const scenarios = [
  { name: "new handshakes", close: true },
  { name: "keep-alive respond", close: false },
];
const results = new Map<string, Result[]>();
try {
  for (const sc of scenarios) {
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of servers) {
        if (round === 0) await wrk(s, sc.close, 2); // warm-up, discarded
        const r = await wrk(s, sc.close);
        const k = `${sc.name}|${s.name}`;
        (results.get(k) ?? results.set(k, []).get(k)!).push(r);
        console.error(
          `${sc.name} ${s.name} round ${round + 1}: ${r.rps.toFixed(0)} req/s p99 ${
            r.p99ms.toFixed(2)
          } ms cpu ${r.cpuUs.toFixed(1)} µs/req errors ${r.errors}`,
        );
      }
    }
  }
} finally {
  const peak = new Map(
    servers.map((
      s,
    ) => [s.name, s.pids().reduce((n, p) => n + proc(p, "status", /VmHWM:\s+(\d+) kB/), 0)]),
  );
  for (const s of servers) {
    try {
      s.child.kill("SIGTERM");
    } catch { /* gone */ }
    await s.child.status;
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const lines = [
    `HTTPS, TLS 1.3, ECDSA P-256. Load: wrk -t1 -c${CONNECTIONS} -d${DURATION}s on core ${LOAD_CORE}; servers on core ${SERVER_CORE}; ${ROUNDS} rounds, alternating, medians.`,
    "",
    "| scenario | server | req/s | p99 ms | CPU µs/req | errors |",
    "|---|---|---:|---:|---:|---:|",
  ];
  for (const sc of scenarios) {
    for (const s of servers) {
      const rs = results.get(`${sc.name}|${s.name}`);
      if (!rs) continue;
      lines.push(
        `| ${sc.name} | ${s.name} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${
          median(rs.map((r) => r.p99ms)).toFixed(2)
        } | ${median(rs.map((r) => r.cpuUs)).toFixed(1)} | ${
          rs.reduce((n, r) => n + r.errors, 0)
        } |`,
      );
    }
  }
  lines.push("", "Peak RSS over the whole run (VmHWM, MiB):");
  for (const s of servers) lines.push(`- ${s.name}: ${(peak.get(s.name)! / 1024).toFixed(1)}`);
  console.log(lines.join("\n"));
  await Deno.remove(dir, { recursive: true });
}
