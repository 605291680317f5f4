/**
 * The php_fastcgi scenario: Gatehouse's `fastcgi` transport, Caddy 2.6.2's and nginx's
 * `fastcgi_pass`, side by side in front of one php-fpm (Debian php8.2-fpm, static pool),
 * alternating servers within each round. Each server is pinned to `SERVER_CORE`, wrk and
 * php-fpm to `LOAD_CORE`. Reported: requests/s, p99 latency and the server's CPU time per
 * request (its utime+stime over the run divided by requests; php-fpm's time is not counted).
 * Every server's answer is checked before it is timed.
 *
 *   deno run -A bench/http/php_fastcgi.ts     # ROUNDS=3 DURATION=5 CONNECTIONS=16
 *
 * `GH_DENO_FLAGS` adds flags to Gatehouse's `deno run` (e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`).
 *
 * Every server's output is kept in a log; a server that ends during the run stops it with how
 * it ended (exit code or signal, its last output, the kernel's lines about it).
 *
 * @module
 */
import { cpuSeconds, freePort, gone, type Server, start, waitUp } from "./_proc.ts";

const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 3);
const DURATION = Number(Deno.env.get("DURATION") ?? 5);
const CONNECTIONS = Number(Deno.env.get("CONNECTIONS") ?? 16);
const SERVER_CORE = Deno.env.get("SERVER_CORE") ?? "1";
const LOAD_CORE = Deno.env.get("LOAD_CORE") ?? "0";
const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const GH_DENO_FLAGS = (Deno.env.get("GH_DENO_FLAGS") ?? "").split(/\s+/).filter(Boolean);

const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-php-" });
const root = `${dir}/www`;
await Deno.mkdir(root);
await Deno.writeTextFile(`${root}/index.php`, `<?php echo "hello from php\\n";`);
await Deno.writeTextFile(
  `${root}/big.php`,
  `<?php header("Content-Type: text/plain"); echo str_repeat("0123456789abcdef", 4096);`,
);
const fpmPort = freePort();
await Deno.writeTextFile(
  `${dir}/fpm.conf`,
  `[global]
error_log = ${dir}/fpm.log
daemonize = no
[www]
listen = 127.0.0.1:${fpmPort}
listen.backlog = 1024
pm = static
pm.max_children = ${CONNECTIONS}
php_admin_value[output_buffering] = 4096
`,
);
const fpm = new Deno.Command("taskset", {
  args: [
    "-c",
    LOAD_CORE,
    "/usr/sbin/php-fpm8.2",
    "--nodaemonize",
    "--allow-to-run-as-root",
    "--fpm-config",
    `${dir}/fpm.conf`,
    "-n",
  ],
  stdout: "null",
  stderr: "null",
}).spawn();
await waitUp(fpmPort);

const route = {
  match: [{ path: ["*.php"] }],
  handle: [{
    handler: "reverse_proxy",
    transport: { protocol: "fastcgi", root, split_path: [".php"] },
    upstreams: [{ dial: `127.0.0.1:${fpmPort}` }],
  }],
};
function config(port: number) {
  return {
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            routes: [route],
          },
        },
      },
    },
  };
}

const servers: Server[] = [];
{
  const port = freePort();
  await Deno.writeTextFile(`${dir}/gh.json`, JSON.stringify(config(port)));
  servers.push(
    await start({
      name: "gatehouse",
      cmd: [
        Deno.execPath(),
        "run",
        "-A",
        ...GH_DENO_FLAGS,
        CLI,
        "run",
        "--config",
        `${dir}/gh.json`,
      ],
      port,
      core: SERVER_CORE,
      dir,
    }),
  );
}
{
  const port = freePort();
  await Deno.writeTextFile(`${dir}/caddy.json`, JSON.stringify(config(port)));
  servers.push(
    await start({
      name: "caddy 2.6.2",
      cmd: ["caddy", "run", "--config", `${dir}/caddy.json`],
      port,
      core: SERVER_CORE,
      dir,
      env: { HOME: dir, XDG_DATA_HOME: `${dir}/c-data`, XDG_CONFIG_HOME: `${dir}/c-config` },
    }),
  );
}
{
  const port = freePort();
  await Deno.writeTextFile(
    `${dir}/nginx.conf`,
    `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  fastcgi_temp_path ${dir}/fcgi;
  proxy_temp_path ${dir}/proxy;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
    root ${root};
    location ~ [^/]\\.php(/|$) {
      fastcgi_split_path_info ^(.+?\\.php)(/.*)$;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
      fastcgi_param PATH_INFO $fastcgi_path_info;
      fastcgi_pass 127.0.0.1:${fpmPort};
    }
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
for (const s of servers) await waitUp(s.port);

const scenarios = [
  { name: "php hello", path: "/index.php", expect: "hello from php\n" },
  { name: "php 64 KiB", path: "/big.php", expect: "0123456789abcdef".repeat(4096) },
];

// answers checked before timing
for (const s of servers) {
  for (const sc of scenarios) {
    const r = await fetch(`http://127.0.0.1:${s.port}${sc.path}`);
    const body = await r.text();
    if (r.status !== 200 || body !== sc.expect) {
      throw new Error(`${s.name} ${sc.name}: ${r.status} ${body.slice(0, 80)}`);
    }
  }
}

async function wrk(s: Server, path: string) {
  const before = s.pids().reduce((n, p) => n + cpuSeconds(p), 0);
  const out = new TextDecoder().decode(
    (await new Deno.Command("taskset", {
      args: [
        "-c",
        LOAD_CORE,
        "wrk",
        "-t1",
        `-c${CONNECTIONS}`,
        `-d${DURATION}s`,
        "--latency",
        `http://127.0.0.1:${s.port}${path}`,
      ],
      stdout: "piped",
    }).output()).stdout,
  );
  const after = s.pids().reduce((n, p) => n + cpuSeconds(p), 0);
  const ended = await gone(s);
  if (ended) throw new Error(`${s.name} ended during the run:\n${ended}`);
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const p99ms = p99 ? Number(p99[1]) * (p99[2] === "us" ? 1e-3 : p99[2] === "s" ? 1e3 : 1) : NaN;
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p99ms,
    cpuUs: requests ? (after - before) * 1e6 / requests : NaN,
    non2xx,
  };
}

const results = new Map<string, { rps: number[]; p99: number[]; cpu: number[] }>();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const sc of scenarios) {
      for (const s of round % 2 ? [...servers].reverse() : servers) {
        const r = await wrk(s, sc.path);
        if (r.non2xx) console.error(`warning: ${s.name} ${sc.name}: ${r.non2xx} non-2xx`);
        const key = `${sc.name}|${s.name}`;
        const e = results.get(key) ?? { rps: [], p99: [], cpu: [] };
        e.rps.push(r.rps);
        e.p99.push(r.p99ms);
        e.cpu.push(r.cpuUs);
        results.set(key, e);
      }
    }
  }
} finally {
  for (const s of servers) {
    try {
      s.child.kill("SIGTERM");
    } catch { /* gone */ }
    await s.child.status;
  }
  fpm.kill("SIGQUIT");
  await fpm.status;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log("| scenario | server | req/s | p99 ms | CPU µs/req |");
console.log("| --- | --- | ---: | ---: | ---: |");
for (const [key, e] of results) {
  const [sc, s] = key.split("|");
  console.log(
    `| ${sc} | ${s} | ${median(e.rps).toFixed(0)} | ${median(e.p99).toFixed(2)} | ${
      median(e.cpu).toFixed(1)
    } |`,
  );
}
