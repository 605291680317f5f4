/**
 * Two cores, side by side: Gatehouse with 1 worker (one process, as before) and with 2 worker
 * processes, Caddy 2.6.2 with GOMAXPROCS=2 and nginx with 2 worker processes, every server and
 * the load generator (wrk, 2 threads) and the proxy's backend sharing the same two cores
 * (`taskset -c 0,1`). Scenarios: respond (13 bytes), a 1 KiB file, a reverse proxy to a local
 * backend. Servers alternate within each round; medians of the rounds. Reported: requests/s,
 * p99 latency, CPU time per request (utime+stime of every process of the server: primary,
 * workers; nginx master and workers) and the memory of all the server's processes by three
 * measures (`memoryOf` of `_proc.ts`): the sum of their RSS, the sum of their PSS, and the
 * union of their resident pages (each physical page once: the Deno binary's pages, which every
 * Gatehouse process maps, count once), idle and under load (the larger of a sample halfway
 * through each run and one right after it).
 * Gatehouse runs as `deno run -A --unstable-lazy-dynamic-imports cli.ts run` (the flags
 * `gatehouse start` gives it, V8 defaults), which its workers get too.
 *
 *   deno run -A bench/http/workers.ts     # ROUNDS=3 DURATION=5 CONNECTIONS=64 CORES=0,1
 *
 * @module
 */
import {
  cpuSeconds,
  freePort,
  has,
  type Memory,
  memoryOf,
  processTree,
  type Server,
  start,
  statusKiB,
  waitUp,
} from "./_proc.ts";

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 3);
const DURATION = Number(Deno.env.get("DURATION") ?? 5);
const CONNECTIONS = Number(Deno.env.get("CONNECTIONS") ?? 64);
const CORES = Deno.env.get("CORES") ?? "0,1";
const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

interface Scenario {
  name: string;
  path: string;
}
const SCENARIOS: Scenario[] = [
  { name: "respond 13 B", path: "/respond" },
  { name: "file 1 KiB", path: "/f/1k.txt" },
  { name: "reverse proxy", path: "/proxy/x" },
].filter((s) => !Deno.env.get("ONLY") || s.name.includes(Deno.env.get("ONLY")!));

function httpApp(listen: string, root: string, upstream: string) {
  return {
    servers: {
      bench: {
        listen: [listen],
        automatic_https: { disable: true },
        routes: [
          {
            match: [{ path: ["/respond"] }],
            handle: [{ handler: "static_response", body: "Hello, World!" }],
            terminal: true,
          },
          {
            match: [{ path: ["/proxy/*"] }],
            handle: [{ handler: "reverse_proxy", upstreams: [{ dial: upstream }] }],
            terminal: true,
          },
          {
            match: [{ path: ["/f/*"] }],
            handle: [
              { handler: "rewrite", strip_path_prefix: "/f" },
              { handler: "file_server", root },
            ],
            terminal: true,
          },
        ],
      },
    },
  };
}

function nginxConfig(dir: string, port: number, root: string, upstream: string): string {
  return `worker_processes 2;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  include /etc/nginx/mime.types;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  upstream up { server ${upstream}; keepalive 32; }
  server {
    listen 127.0.0.1:${port} reuseport;
    location = /respond { default_type text/plain; return 200 "Hello, World!"; }
    location /proxy/ { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; }
    location /f/ { alias ${root}/; }
  }
}
`;
}

/** Every process of a server: it and its children (workers), recursively. */
const allPids = (s: Server) => processTree(s.child.pid);
const memory = (s: Server) => memoryOf(allPids(s));
/** KiB as MiB, one decimal ("–" when unknown). */
const mib = (kib?: number) => kib === undefined ? "–" : (kib / 1024).toFixed(1);

/** The larger of two measurements, measure by measure. */
const larger = (a: Memory, b: Memory): Memory => ({
  processes: Math.max(a.processes, b.processes),
  rss: Math.max(a.rss, b.rss),
  pss: Math.max(a.pss, b.pss),
  union: a.union === undefined || b.union === undefined ? undefined : Math.max(a.union, b.union),
});

interface Result {
  rps: number;
  p99ms: number;
  cpuUsPerReq: number;
  /** Under load: the larger of a sample halfway through the run and one right after it. */
  mem: Memory;
}

function parseLatency(s: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(s);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
}

async function wrk(server: Server, sc: Scenario, seconds = DURATION): Promise<Result> {
  const args = ["-c", CORES, "wrk", "-t2", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency"];
  args.push(`http://127.0.0.1:${server.port}${sc.path}`);
  const cpu = () => allPids(server).reduce((n, p) => n + cpuSeconds(p), 0);
  const before = cpu();
  let halfway: Memory | undefined;
  const timer = setTimeout(() => (halfway = memory(server)), seconds * 500);
  const out = new TextDecoder().decode(
    (await new Deno.Command("taskset", { args, stdout: "piped" }).output()).stdout,
  );
  const after = cpu();
  clearTimeout(timer);
  const mem = memory(server);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const bad = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) +
    (/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1)
      .reduce((a, b) => a + Number(b), 0) ?? 0);
  if (bad) console.error(`warning: ${server.name} ${sc.name}: ${bad} failed requests`);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p99ms: parseLatency(/99%\s+(\S+)/.exec(out)?.[1] ?? ""),
    cpuUsPerReq: requests ? (after - before) * 1e6 / requests : NaN,
    mem: halfway ? larger(halfway, mem) : mem,
  };
}

const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
const startedAt = new Date();
const loadBefore = loadavg();
const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-workers-" });
const root = `${dir}/site`;
await Deno.mkdir(root);
await Deno.writeFile(`${root}/1k.txt`, new Uint8Array(1024).fill(97));

const backendPort = freePort();
await Deno.writeTextFile(
  `${dir}/backend.ts`,
  `Deno.serve({ hostname: "127.0.0.1", port: ${backendPort}, onListen() {} }, () => new Response("proxied hello"));`,
);
const backend = await start({
  name: "backend",
  cmd: [Deno.execPath(), "run", "-A", `${dir}/backend.ts`],
  port: backendPort,
  core: CORES,
  dir,
});
await waitUp(backendPort);
const upstream = `127.0.0.1:${backendPort}`;

/** The Deno cache this runner uses: the servers find every module transpiled there already. */
function denoDir(): string {
  const out = new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .outputSync();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

const env = {
  DENO_DIR: denoDir(),
  HOME: dir,
  XDG_DATA_HOME: `${dir}/gh-data`,
  XDG_CONFIG_HOME: `${dir}/gh-config`,
};
const servers: Server[] = [];
for (const workers of [1, 2]) {
  const port = freePort();
  const file = `${dir}/gatehouse-${workers}.json`;
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      admin: { disabled: true },
      apps: { http: httpApp(`127.0.0.1:${port}`, root, upstream) },
    }),
  );
  servers.push(
    await start({
      name: `gatehouse, ${workers} worker${workers > 1 ? "s" : ""}`,
      cmd: [
        Deno.execPath(),
        "run",
        "-A",
        "--unstable-lazy-dynamic-imports",
        "--config",
        CONFIG,
        CLI,
        "run",
        "--config",
        file,
        "--workers",
        String(workers),
      ],
      port,
      core: CORES,
      dir,
      env,
    }),
  );
}
if (has("caddy")) {
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/caddy.json`,
    JSON.stringify({
      admin: { disabled: true },
      apps: { http: httpApp(`127.0.0.1:${port}`, root, upstream) },
    }),
  );
  servers.push(
    await start({
      name: "caddy 2.6.2, GOMAXPROCS=2",
      cmd: ["caddy", "run", "--config", `${dir}/caddy.json`],
      port,
      core: CORES,
      dir,
      env: { ...env, GOMAXPROCS: "2" },
    }),
  );
}
if (has("nginx")) {
  const port = freePort();
  await Deno.writeTextFile(`${dir}/nginx.conf`, nginxConfig(dir, port, root, upstream));
  servers.push(
    await start({
      name: "nginx, 2 workers",
      cmd: ["nginx", "-c", `${dir}/nginx.conf`, "-p", dir],
      port,
      core: CORES,
      dir,
    }),
  );
}
for (const s of servers) await waitUp(s.port);
for (const sc of SCENARIOS) {
  for (const s of servers) {
    const res = await fetch(`http://127.0.0.1:${s.port}${sc.path}`);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${s.name} ${sc.name}: ${res.status} ${body}`);
  }
}
// idle memory, once every Gatehouse worker is up
await new Promise((r) => setTimeout(r, 3000));
const idle = new Map(servers.map((s) => [s.name, memory(s)]));

const results = new Map<string, Result[]>();
try {
  for (const sc of SCENARIOS) {
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of servers) {
        if (round === 0) await wrk(s, sc, 2); // warm-up, discarded
        const r = await wrk(s, sc);
        const key = `${sc.name}|${s.name}`;
        (results.get(key) ?? results.set(key, []).get(key)!).push(r);
        console.error(
          `${sc.name} | ${s.name} | round ${round + 1}: ${r.rps.toFixed(0)} req/s, p99 ${
            r.p99ms.toFixed(2)
          } ms, ${r.cpuUsPerReq.toFixed(1)} µs/req, RSS ${mib(r.mem.rss)} PSS ${
            mib(r.mem.pss)
          } union ${mib(r.mem.union)} MiB`,
        );
      }
    }
  }
} finally {
  const peak = new Map(
    servers.map((s) => [s.name, allPids(s).reduce((n, p) => n + statusKiB(p, "VmHWM"), 0)]),
  );
  for (const s of [...servers, backend]) {
    try {
      s.child.kill("SIGTERM");
    } catch { /* gone */ }
    await s.child.status;
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const lines = [
    `${startedAt.toISOString()}: every server, wrk (-t2 -c${CONNECTIONS} -d${DURATION}s) and the ` +
    `proxy's backend share cores ${CORES} (taskset); ${ROUNDS} rounds, servers alternating, ` +
    `medians. Load average before: ${loadBefore}; after: ${loadavg()}.`,
    "",
    "| scenario | server | req/s | p99 ms | CPU µs/req | RSS MiB | PSS MiB | union MiB |",
    "|---|---|---:|---:|---:|---:|---:|---:|",
  ];
  /** Per server, the largest memory under load over every scenario and round. */
  const loaded = new Map<string, Memory>();
  for (const sc of SCENARIOS) {
    for (const s of servers) {
      const rs = results.get(`${sc.name}|${s.name}`);
      if (!rs) continue;
      const m = rs.map((r) => r.mem).reduce(larger);
      loaded.set(s.name, loaded.has(s.name) ? larger(loaded.get(s.name)!, m) : m);
      lines.push(
        `| ${sc.name} | ${s.name} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${
          median(rs.map((r) => r.p99ms)).toFixed(2)
        } | ${median(rs.map((r) => r.cpuUsPerReq)).toFixed(1)} | ${mib(m.rss)} | ${mib(m.pss)} | ${
          mib(m.union)
        } |`,
      );
    }
  }
  lines.push(
    "",
    "| server | processes | idle RSS | idle PSS | idle union | peak RSS (VmHWM) | peak RSS | " +
      "peak PSS | peak union |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  );
  for (const s of servers) {
    const m = idle.get(s.name)!;
    const l = loaded.get(s.name);
    lines.push(
      `| ${s.name} | ${m.processes} | ${mib(m.rss)} | ${mib(m.pss)} | ${mib(m.union)} | ${
        mib(peak.get(s.name))
      } | ${mib(l?.rss)} | ${mib(l?.pss)} | ${mib(l?.union)} |`,
    );
  }
  const [one, two] = ["gatehouse, 1 worker", "gatehouse, 2 workers"];
  if (idle.has(one) && idle.has(two)) {
    const ratio = (a?: number, b?: number) => a && b ? (b / a).toFixed(2) : "–";
    const i1 = idle.get(one)!, i2 = idle.get(two)!, l1 = loaded.get(one), l2 = loaded.get(two);
    lines.push(
      "",
      "The whole server, 2 workers / 1 worker:",
      "",
      "| measure | idle | peak |",
      "|---|---:|---:|",
      `| sum of RSS | ${ratio(i1.rss, i2.rss)} | ${ratio(l1?.rss, l2?.rss)} |`,
      `| sum of PSS | ${ratio(i1.pss, i2.pss)} | ${ratio(l1?.pss, l2?.pss)} |`,
      `| union of resident pages | ${ratio(i1.union, i2.union)} | ${ratio(l1?.union, l2?.union)} |`,
      `| sum of VmHWM | | ${ratio(peak.get(one), peak.get(two))} |`,
    );
  }
  lines.push(
    "",
    "MiB; peak: the largest sample under load (halfway through a run, or right after it) over " +
      "every scenario, and the sum of each process's VmHWM (which no sample can exceed).",
  );
  if ([...idle.values()].some((m) => m.union === undefined)) {
    lines.push("The union needs page frame numbers, which the kernel shows to root only.");
  }
  console.log(lines.join("\n"));
  await Deno.remove(dir, { recursive: true });
}
