/**
 * HTTP load scenarios, Gatehouse side by side with Caddy 2.6.2 (and nginx when installed),
 * alternating servers within each round, each server pinned to one core with `taskset`.
 * Gatehouse runs twice: as `deno run -A cli.ts run` (V8 defaults, or `GH_V8_FLAGS`) and with
 * the V8 flags `gatehouse start` uses (`SERVER_V8_FLAGS`).
 * Scenarios: respond (13 bytes), 1 KiB file, 1 MiB file, 404, gzip of a 100 KiB text file,
 * reverse proxy to a local backend, the same proxy behind the cache (memory and disk storage;
 * nginx's `proxy_cache`), and respond behind a rate limit that never refuses (`rate_limit`;
 * nginx's `limit_req`), whose CPU time per request less respond's is the limit's cost; a bare
 * `Deno.serve` answers `respond`, the two file scenarios (from memory) and the two proxy
 * scenarios (the smallest keep-alive HTTP/1.1 client over `Deno.connect`) as the floor. Caddy
 * 2.6.2 has neither the cache nor the rate limit (they are plugins there) and skips those.
 * The hardened variants run on servers of their own in the same processes: `respond with
 * timeouts` and `proxy with timeouts` (`read_header_timeout` 1m and `idle_timeout` 5m, Caddy's
 * own defaults written out; nginx has its timeouts always), `HTTPS respond` (TLS 1.3, ECDSA
 * P-256) and `mTLS respond` (the same with `client_authentication` mode `request`; nginx
 * `ssl_verify_client optional_no_ca`; the bare floor is Deno's TLS server, which cannot ask
 * for client certificates).
 * Reports requests/s, p99 latency, server CPU time per request, the resident set after each
 * scenario and the peak resident set of the whole run, then per scenario the ratio of each
 * server's CPU time per request to Caddy's, nginx's and the bare floor's of the same run.
 *
 *   deno run -A bench/http/run.ts            # ROUNDS=2 DURATION=5 CONNECTIONS=32 SERVER_CORE=1
 *
 * @module
 */

import { SERVER_V8_FLAGS } from "../../lib/cli/start.ts";

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
  try {
    return new Deno.Command("sh", { args: ["-c", `command -v ${cmd}`], stdout: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** Which listener of each server a scenario loads. */
type Variant = "plain" | "timeouts" | "https" | "mtls";

interface Scenario {
  name: string;
  path: string;
  headers?: Record<string, string>;
  /** The servers that run it (name prefixes); all when absent. */
  only?: string[];
  /** The listener (default `plain`). */
  variant?: Variant;
}

const ONLY = Deno.env.get("ONLY");
const ALL_SCENARIOS: Scenario[] = [
  { name: "respond 13 B", path: "/respond" },
  { name: "file 1 KiB", path: "/f/1k.txt" },
  { name: "file 1 MiB", path: "/f/1m.bin" },
  { name: "404", path: "/f/missing.txt" },
  { name: "gzip 100 KiB", path: "/f/100k.txt", headers: { "Accept-Encoding": "gzip" } },
  { name: "reverse proxy", path: "/proxy/x" },
  // a single-page app: the route is no file, so try_files falls back to /index.html
  { name: "try_files SPA", path: "/spa/dashboard/settings" },
  // the proxy scenario's answer served from the cache (every request a hit after the first)
  { name: "cached proxy", path: "/cached/x", only: ["gatehouse", "nginx"] },
  { name: "cached proxy (disk)", path: "/cached-disk/x", only: ["gatehouse"] },
  // respond behind a rate limit per client address that never refuses
  { name: "rate_limit respond", path: "/limited", only: ["gatehouse", "nginx"] },
  // the hardened configs: Caddy's default timeouts written out, TLS, TLS client authentication
  { name: "respond with timeouts", path: "/respond", variant: "timeouts" },
  { name: "proxy with timeouts", path: "/proxy/x", variant: "timeouts" },
  { name: "HTTPS respond", path: "/respond", variant: "https" },
  { name: "mTLS respond", path: "/respond", variant: "mtls" },
];
const runs = (s: Scenario, server: string) => !s.only || s.only.some((p) => server.startsWith(p));
/** Scenarios the bare `Deno.serve` floor answers. */
const BARE = [
  "respond 13 B",
  "reverse proxy",
  "proxy with timeouts",
  "file 1 KiB",
  "file 1 MiB",
  "respond with timeouts",
  "HTTPS respond",
  "mTLS respond",
];
/** `ONLY`: scenarios whose name contains one of its comma-separated parts. */
const SCENARIOS = ONLY
  ? ALL_SCENARIOS.filter((s) => ONLY.split(",").some((part) => s.name.includes(part)))
  : ALL_SCENARIOS;

/** The ports of one server's listeners, by variant. */
type Ports = Record<Variant, number>;

function httpConfig(
  ports: Ports,
  root: string,
  upstream: string,
  engine = "deno",
  cacheDir = "",
) {
  // the cache and the rate limit, for the servers that have them
  const ours = cacheDir
    ? [
      {
        match: [{ path: ["/cached/*"] }],
        handle: [
          { handler: "cache" },
          { handler: "reverse_proxy", upstreams: [{ dial: upstream }] },
        ],
        terminal: true,
      },
      {
        match: [{ path: ["/cached-disk/*"] }],
        handle: [
          { handler: "cache", simplefs: { path: cacheDir } },
          { handler: "reverse_proxy", upstreams: [{ dial: upstream }] },
        ],
        terminal: true,
      },
      {
        match: [{ path: ["/limited"] }],
        handle: [
          {
            handler: "rate_limit",
            rate_limits: {
              bench: { key: "{http.request.remote.host}", window: "1s", max_events: 10_000_000 },
            },
          },
          { handler: "static_response", body: "Hello, World!" },
        ],
        terminal: true,
      },
    ]
    : [];
  const routes = [
    ...ours,
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
      // what `try_files {path} {path}/ /index.html` and `file_server` become
      match: [{ path: ["/spa/*"] }],
      handle: [
        { handler: "rewrite", strip_path_prefix: "/spa" },
        {
          handler: "subroute",
          routes: [
            {
              match: [{
                file: {
                  root: `${root}/spa`,
                  try_files: [
                    "{http.request.uri.path}",
                    "{http.request.uri.path}/",
                    "/index.html",
                  ],
                },
              }],
              handle: [{ handler: "rewrite", uri: "{http.matchers.file.relative}" }],
            },
            { handle: [{ handler: "file_server", root: `${root}/spa` }] },
          ],
        },
      ],
      terminal: true,
    },
    {
      match: [{ path: ["/f/*"] }],
      handle: [
        { handler: "rewrite", strip_path_prefix: "/f" },
        { handler: "encode", encodings: { gzip: {} } },
        { handler: "file_server", root },
      ],
      terminal: true,
    },
  ];
  const server = (port: number, extra: Record<string, unknown> = {}) => ({
    listen: [`127.0.0.1:${port}`],
    ...(engine === "deno" ? {} : { listener_engine: engine }),
    automatic_https: { disable: true },
    routes,
    ...extra,
  });
  // the certificate is chosen by server name; wrk sends none for 127.0.0.1
  const tls = { default_sni: "localhost" };
  return {
    servers: {
      bench: server(ports.plain),
      timeouts: server(ports.timeouts, { read_header_timeout: "1m", idle_timeout: "5m" }),
      https: server(ports.https, { tls_connection_policies: [tls] }),
      mtls: server(ports.mtls, {
        tls_connection_policies: [{ ...tls, client_authentication: { mode: "request" } }],
        // client authentication turns it on; clients of 127.0.0.1 send no server name
        strict_sni_host: false,
      }),
    },
  };
}

/** The TLS app of Gatehouse and Caddy: the bench certificate. */
function tlsApp() {
  return { certificates: { load_files: [{ certificate: CERT, key: KEY }] } };
}

function nginxConfig(dir: string, ports: Ports, root: string, upstream: string): string {
  // nginx always has its timeouts: they are set to Caddy's defaults, on every server
  const locations = `
    location /cached/ { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_cache bench; proxy_cache_valid 200 120s; }
    location = /limited { limit_req zone=rl burst=1000000 nodelay; default_type text/plain; return 200 "Hello, World!"; }
    location = /respond { default_type text/plain; return 200 "Hello, World!"; }
    location /proxy/ { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; }
    location /f/ { alias ${root}/; }
    location /spa/ { root ${root}; try_files $uri $uri/ /spa/index.html; }`;
  const tls = `ssl_certificate ${CERT}; ssl_certificate_key ${KEY}; ssl_protocols TLSv1.3;`;
  return `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  include /etc/nginx/mime.types;
  gzip on; gzip_types text/plain; gzip_min_length 512;
  client_body_temp_path ${dir}; proxy_temp_path ${dir}; fastcgi_temp_path ${dir}; uwsgi_temp_path ${dir}; scgi_temp_path ${dir};
  upstream up { server ${upstream}; keepalive 32; }
  proxy_cache_path ${dir}/nginx-cache keys_zone=bench:10m max_size=100m inactive=10m use_temp_path=off;
  limit_req_zone $binary_remote_addr zone=rl:10m rate=10000000r/s;
  keepalive_requests 1000000; keepalive_timeout 300s; client_header_timeout 60s;
  server {
    listen 127.0.0.1:${ports.plain};${locations}
  }
  server {
    listen 127.0.0.1:${ports.https} ssl; ${tls}${locations}
  }
  server {
    listen 127.0.0.1:${ports.mtls} ssl; ${tls}
    ssl_verify_client optional_no_ca;${locations}
  }
}
`;
}

interface Server {
  name: string;
  /** The port of the plain listener (what `waitUp` waits for). */
  port: number;
  ports: Ports;
  child: Deno.ChildProcess;
  pids(): number[];
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

function peakRSS(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function currentRSS(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function children(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/).filter(
      Boolean,
    ).map(Number);
  } catch {
    return [];
  }
}

async function waitUp(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      c.close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`port ${port} never opened`);
}

function start(
  name: string,
  cmd: string[],
  ports: Ports,
  env: Record<string, string> = {},
): Server {
  const child = new Deno.Command("taskset", {
    args: ["-c", SERVER_CORE, ...cmd],
    stdout: "null",
    stderr: "null",
    env,
  }).spawn();
  return {
    name,
    port: ports.plain,
    ports,
    child,
    pids: () => [child.pid, ...children(child.pid)],
  };
}

/** The Deno cache directory this runner uses (`deno info --json`'s `denoDir`). */
function denoDir(): string {
  const out = new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .outputSync();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}

/** Starts a server once and stops it, so that every module it loads is in the cache. */
async function warmUp(cmd: string[], port: number, env: Record<string, string>): Promise<void> {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdout: "null",
    stderr: "null",
    env,
  })
    .spawn();
  await waitUp(port);
  child.kill("SIGTERM");
  await child.status;
}

interface Result {
  rssKiB: number;
  rps: number;
  p99ms: number;
  requests: number;
  cpuUsPerReq: number;
}

function parseLatency(s: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(s);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
}

/** The URL of a scenario on a server. */
function url(server: Server, s: Scenario): string {
  const v = s.variant ?? "plain";
  const scheme = v === "https" || v === "mtls" ? "https" : "http";
  return `${scheme}://127.0.0.1:${server.ports[v]}${s.path}`;
}

async function wrk(server: Server, s: Scenario, seconds = DURATION): Promise<Result> {
  const args = ["-c", LOAD_CORE, "wrk", "-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency"];
  for (const [k, v] of Object.entries(s.headers ?? {})) args.push("-H", `${k}: ${v}`);
  args.push(url(server, s));
  const before = server.pids().reduce((n, p) => n + cpuTicks(p), 0);
  const out = new TextDecoder().decode(
    (await new Deno.Command("taskset", { args, stdout: "piped" }).output()).stdout,
  );
  const after = server.pids().reduce((n, p) => n + cpuTicks(p), 0);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const p99 = parseLatency(/99%\s+(\S+)/.exec(out)?.[1] ?? "");
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  if (non2xx && s.name !== "404") {
    console.error(`warning: ${server.name} ${s.name}: ${non2xx} non-2xx`);
  }
  const rssKiB = server.pids().reduce((n, p) => n + currentRSS(p), 0);
  return {
    rssKiB,
    rps,
    p99ms: p99,
    requests,
    cpuUsPerReq: requests ? ((after - before) / TICK) * 1e6 / requests : NaN,
  };
}

const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-" });
// a CA and an ECDSA P-256 certificate it signed for localhost and 127.0.0.1 (the TLS scenarios)
const CA = `${dir}/ca.pem`;
const CERT = `${dir}/cert.pem`;
const KEY = `${dir}/cert.key`;
{
  const openssl = (args: string[]) => {
    const out = new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" })
      .outputSync();
    if (!out.success) throw new Error(`openssl: ${new TextDecoder().decode(out.stderr)}`);
  };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl(["req", "-x509", ...ec, "-keyout", `${dir}/ca.key`, "-out", CA, "-days", "2"]
    .concat(["-subj", "/CN=Bench CA"]));
  await Deno.writeTextFile(`${dir}/cert.ext`, "subjectAltName=DNS:localhost,IP:127.0.0.1\n");
  openssl(["req", ...ec, "-keyout", KEY, "-out", `${dir}/cert.csr`, "-subj", "/CN=localhost"]);
  openssl(["x509", "-req", "-in", `${dir}/cert.csr`, "-CA", CA, "-CAkey", `${dir}/ca.key`]
    .concat(["-CAcreateserial", "-days", "2", "-out", CERT, "-extfile", `${dir}/cert.ext`]));
}
/** Free ports for one server's listeners. */
const freePorts = (): Ports => ({
  plain: freePort(),
  timeouts: freePort(),
  https: freePort(),
  mtls: freePort(),
});
const root = `${dir}/site`;
await Deno.mkdir(root);
await Deno.writeFile(`${root}/1k.txt`, new Uint8Array(1024).fill(97));
await Deno.mkdir(`${root}/spa/assets`, { recursive: true });
await Deno.writeTextFile(
  `${root}/spa/index.html`,
  `<!doctype html><title>app</title><div id="app"></div>` + "<!-- pad -->".repeat(80),
);
await Deno.writeTextFile(`${root}/spa/assets/app.js`, "console.log('app');\n");
await Deno.writeFile(`${root}/1m.bin`, new Uint8Array(1024 * 1024).map((_, i) => i % 251));
await Deno.writeTextFile(
  `${root}/100k.txt`,
  Array.from(
    { length: 2000 },
    (_, i) => `line ${i} of a text file that compresses well ${i % 17}\n`,
  ).join("").slice(0, 100 * 1024),
);

// Backend for the proxy scenario (on the load core).
const backendPort = freePort();
await Deno.writeTextFile(
  `${dir}/backend.ts`,
  `Deno.serve({ hostname: "127.0.0.1", port: ${backendPort}, onListen() {} }, () => new Response("proxied hello"));`,
);
const backend = new Deno.Command("taskset", {
  args: ["-c", LOAD_CORE, Deno.execPath(), "run", "-A", `${dir}/backend.ts`],
  stdout: "null",
  stderr: "null",
}).spawn();
await waitUp(backendPort);
const upstream = `127.0.0.1:${backendPort}`;

const servers: Server[] = [];
/** A Gatehouse or Caddy JSON config of the bench servers. */
const benchConfig = (ports: Ports, engine: string, cacheDir = "") =>
  JSON.stringify({
    admin: { disabled: true },
    apps: { tls: tlsApp(), http: httpConfig(ports, root, upstream, engine, cacheDir) },
  });
{
  const ports = freePorts();
  await Deno.writeTextFile(
    `${dir}/gatehouse.json`,
    benchConfig(ports, "deno", `${dir}/gh-cache-1`),
  );
  // The servers use the runner's Deno cache, which the warm-up below fills: a server started on
  // an empty cache transpiles its TypeScript first and stays ~15 MiB larger until restarted,
  // which is a first-run cost, not the steady state this run measures.
  const env = {
    DENO_DIR: denoDir(),
    HOME: dir,
    XDG_DATA_HOME: `${dir}/gh-data`,
    XDG_CONFIG_HOME: `${dir}/gh-config`,
    ...Object.fromEntries(
      (Deno.env.get("GH_ENV") ?? "").split(/\s+/).filter(Boolean).map((kv) => kv.split("=", 2)),
    ),
  };
  const v8 = Deno.env.get("GH_V8_FLAGS");
  const denoArgs = v8 ? ["run", `--v8-flags=${v8}`, "-A"] : ["run", "-A"];
  await warmUp(
    [Deno.execPath(), "run", "-A", CLI, "run", "--config", `${dir}/gatehouse.json`],
    ports.plain,
    env,
  );
  servers.push(
    start(
      "gatehouse",
      [Deno.execPath(), ...denoArgs, CLI, "run", "--config", `${dir}/gatehouse.json`],
      ports,
      env,
    ),
  );
  // The same server with the V8 flags `gatehouse start` gives its background process.
  const ports2 = freePorts();
  await Deno.writeTextFile(
    `${dir}/gatehouse-start.json`,
    benchConfig(ports2, "deno", `${dir}/gh-cache-2`),
  );
  servers.push(
    start(
      "gatehouse (start flags)",
      [
        Deno.execPath(),
        "run",
        `--v8-flags=${SERVER_V8_FLAGS}`,
        "-A",
        CLI,
        "run",
        "--config",
        `${dir}/gatehouse-start.json`,
      ],
      ports2,
      env,
    ),
  );
  // The node listener engine (raw upgrades, TLS details), V8 defaults; skipped with NO_NODE=1.
  if (!Deno.env.get("NO_NODE")) {
    const ports3 = freePorts();
    await Deno.writeTextFile(
      `${dir}/gatehouse-node.json`,
      benchConfig(ports3, "node", `${dir}/gh-cache-3`),
    );
    await warmUp(
      [Deno.execPath(), "run", "-A", CLI, "run", "--config", `${dir}/gatehouse-node.json`],
      ports3.plain,
      env,
    );
    servers.push(
      start(
        "gatehouse (node engine)",
        [Deno.execPath(), ...denoArgs, CLI, "run", "--config", `${dir}/gatehouse-node.json`],
        ports3,
        env,
      ),
    );
  }
}
if (has("caddy")) {
  const ports = freePorts();
  await Deno.writeTextFile(`${dir}/caddy.json`, benchConfig(ports, "deno"));
  servers.push(
    start("caddy 2.6.2", ["caddy", "run", "--config", `${dir}/caddy.json`], ports, {
      HOME: dir,
      XDG_DATA_HOME: `${dir}/c-data`,
      XDG_CONFIG_HOME: `${dir}/c-config`,
      GOMAXPROCS: "1",
    }),
  );
}
if (has("nginx")) {
  const ports = freePorts();
  // nginx's timeouts are always on: the timeouts scenarios load its one plain server
  ports.timeouts = ports.plain;
  await Deno.writeTextFile(`${dir}/nginx.conf`, nginxConfig(dir, ports, root, upstream));
  servers.push(start("nginx", ["nginx", "-c", `${dir}/nginx.conf`, "-p", dir], ports));
}
{
  const ports = freePorts();
  ports.timeouts = ports.plain; // Deno.serve has no timeouts to set: the floor
  ports.mtls = ports.https; // nor client certificates
  await Deno.writeTextFile(
    `${dir}/bare.ts`,
    // The floor for the file scenarios too: contents already in memory, no file-system call.
    `const small = Deno.readFileSync(${JSON.stringify(`${root}/1k.txt`)});
const big = Deno.readFileSync(${JSON.stringify(`${root}/1m.bin`)});
// The proxy floor: the smallest keep-alive HTTP/1.1 client over Deno.connect (no header
// checks, Content-Length answers only), one connection per request in flight.
const idle = [];
const enc = new TextEncoder();
const dec = new TextDecoder();
async function proxied(req, path) {
  const c = idle.pop() ?? await Deno.connect({ hostname: "127.0.0.1", port: ${backendPort} });
  let head = req.method + " " + path + " HTTP/1.1\\r\\nhost: 127.0.0.1:${backendPort}\\r\\n";
  for (const [k, v] of req.headers) if (k !== "connection" && k !== "host") head += k + ": " + v + "\\r\\n";
  await c.write(enc.encode(head + "\\r\\n"));
  const b = new Uint8Array(4096);
  let n = 0;
  for (;;) {
    const r = await c.read(b.subarray(n));
    if (r === null) throw new Error("upstream closed");
    n += r;
    const s = dec.decode(b.subarray(0, n));
    const e = s.indexOf("\\r\\n\\r\\n");
    if (e < 0) continue;
    const len = Number(/content-length: *(\\d+)/i.exec(s)[1]);
    if (n < e + 4 + len) continue;
    idle.push(c);
    return new Response(b.slice(e + 4, e + 4 + len), { headers: { "content-type": "text/plain;charset=UTF-8" } });
  }
}
const handler = (req) => {
  const p = new URL(req.url).pathname;
  if (p.startsWith("/proxy/")) return proxied(req, p);
  if (p === "/f/1k.txt") return new Response(small);
  if (p === "/f/1m.bin") {
    return new Response(new ReadableStream({ start(c) { c.enqueue(big); c.close(); } }));
  }
  return new Response("Hello, World!");
};
Deno.serve({ hostname: "127.0.0.1", port: ${ports.plain}, onListen() {} }, handler);
Deno.serve({ hostname: "127.0.0.1", port: ${ports.https}, onListen() {},
  cert: Deno.readTextFileSync(${JSON.stringify(CERT)}),
  key: Deno.readTextFileSync(${JSON.stringify(KEY)}) }, handler);`,
  );
  servers.push(start("bare Deno.serve", [Deno.execPath(), "run", "-A", `${dir}/bare.ts`], ports));
}
for (const s of servers) await waitUp(s.port);
// Every server must give the same answer before it is timed (status and body length).
const client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(CA)] });
for (const sc of SCENARIOS) {
  const seen: string[] = [];
  for (const srv of servers) {
    if (srv.name === "bare Deno.serve" && !BARE.includes(sc.name)) continue;
    if (!runs(sc, srv.name)) continue;
    const res = await fetch(url(srv, sc), { headers: sc.headers, client });
    const body = new Uint8Array(await res.arrayBuffer());
    seen.push(`${srv.name}: ${res.status} ${body.length} B`);
  }
  console.error(`check ${sc.name}: ${seen.join(", ")}`);
}

const results = new Map<string, Result[]>();
try {
  for (const sc of SCENARIOS) {
    for (let round = 0; round < ROUNDS; round++) {
      for (const srv of servers) {
        if (srv.name === "bare Deno.serve" && !BARE.includes(sc.name)) continue;
        if (!runs(sc, srv.name)) continue;
        if (round === 0) await wrk(srv, sc, 2); // warm-up (JIT, connection pools), discarded
        const r = await wrk(srv, sc);
        const key = `${sc.name}|${srv.name}`;
        (results.get(key) ?? results.set(key, []).get(key)!).push(r);
        console.error(
          `${sc.name} ${srv.name} round ${round + 1}: ${r.rps.toFixed(0)} req/s p99 ${
            r.p99ms.toFixed(2)
          } ms cpu ${r.cpuUsPerReq.toFixed(1)} µs/req`,
        );
      }
    }
  }
} finally {
  const rss = new Map(servers.map((s) => [s.name, s.pids().reduce((n, p) => n + peakRSS(p), 0)]));
  for (const s of servers) {
    try {
      s.child.kill("SIGTERM");
    } catch { /* gone */ }
    await s.child.status;
  }
  backend.kill("SIGTERM");
  await backend.status;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const lines = [
    `Load: wrk -t1 -c${CONNECTIONS} -d${DURATION}s on core ${LOAD_CORE}; each server pinned to core ${SERVER_CORE}; ${ROUNDS} rounds, servers alternating, medians.`,
    "",
    "| scenario | server | req/s | p99 ms | CPU µs/req | RSS after MiB |",
    "|---|---|---:|---:|---:|---:|",
  ];
  for (const sc of SCENARIOS) {
    for (const srv of servers) {
      const rs = results.get(`${sc.name}|${srv.name}`);
      if (!rs) continue;
      lines.push(
        `| ${sc.name} | ${srv.name} | ${median(rs.map((r) => r.rps)).toFixed(0)} | ${
          median(rs.map((r) => r.p99ms)).toFixed(2)
        } | ${median(rs.map((r) => r.cpuUsPerReq)).toFixed(1)} | ${
          (Math.max(...rs.map((r) => r.rssKiB)) / 1024).toFixed(1)
        } |`,
      );
    }
  }
  // each server's CPU per request against the references of the same scenario and run
  const cpu = (sc: Scenario, name: string) => {
    const rs = results.get(`${sc.name}|${name}`);
    return rs ? median(rs.map((r) => r.cpuUsPerReq)) : NaN;
  };
  const ratio = (a: number, b: number) => Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : "–";
  lines.push(
    "",
    "CPU time per request as a ratio to Caddy's, nginx's and the bare floor's (same run):",
    "",
    "| scenario | server | CPU µs/req | / caddy | / nginx | / bare Deno |",
    "|---|---|---:|---:|---:|---:|",
  );
  for (const sc of SCENARIOS) {
    const caddy = cpu(sc, "caddy 2.6.2");
    const nginx = cpu(sc, "nginx");
    const bare = cpu(sc, "bare Deno.serve");
    for (const srv of servers) {
      const c = cpu(sc, srv.name);
      if (!Number.isFinite(c)) continue;
      lines.push(
        `| ${sc.name} | ${srv.name} | ${c.toFixed(1)} | ${ratio(c, caddy)} | ${ratio(c, nginx)} | ${
          ratio(c, bare)
        } |`,
      );
    }
  }
  lines.push("", "Peak RSS over the whole run (VmHWM, MiB):");
  for (const srv of servers) lines.push(`- ${srv.name}: ${(rss.get(srv.name)! / 1024).toFixed(1)}`);
  console.log(lines.join("\n"));
  await Deno.remove(dir, { recursive: true });
}
