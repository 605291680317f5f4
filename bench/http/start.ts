/**
 * Start time and idle memory: `gatehouse run` with a small HTTPS Caddyfile (`localhost` with
 * the internal issuer, `respond "hi"`) beside Caddy 2.6.2 with the same Caddyfile.
 *
 * - **Start time**, with hyperfine: each run starts the server, polls with curl every 10 ms
 *   until `https://localhost:<port>/` answers 200, and kills the server's process group
 *   (SIGKILL, so that no graceful shutdown is counted; the next run binds the same ports).
 *   Each server's data directory (`XDG_DATA_HOME`, `HOME`) is made once before timing by one
 *   untimed start, so the local CA and the site's certificate exist: what is timed is a
 *   restart, as a user's every start after the first. The Deno cache is the runner's (the
 *   modules are transpiled once, before timing). A shell that runs `true` with the same poll
 *   is the floor (`curl`'s own start, about 10 ms a poll).
 * - **Idle memory**: each server started once more, asked once, then left alone for
 *   `IDLE_WAIT` ms; the memory of all its processes by three measures (`memoryOf` of
 *   `_proc.ts`): the sum of their RSS, the sum of their PSS, and the union of their resident
 *   pages, each physical page counted once (the Deno binary's pages, which every Gatehouse
 *   process maps, once).
 *
 * A bare `Deno.serve` with a certificate file is the runtime's floor. Gatehouse runs at its defaults (worker processes, one per core) and with `GATEHOUSE_WORKERS=1`
 * (one process).
 *
 *   deno run -A bench/http/start.ts    # RUNS=10 WARMUP=1 IDLE_WAIT=3000 ONLY=<name substrings>
 *
 * @module
 */
import { freePort, has, type Memory, memoryOf, processTree } from "./_proc.ts";

const RUNS = Number(Deno.env.get("RUNS") ?? 10);
const WARMUP = Number(Deno.env.get("WARMUP") ?? 1);
const IDLE_WAIT = Number(Deno.env.get("IDLE_WAIT") ?? 3000);
const ONLY = Deno.env.get("ONLY")?.split(",").filter(Boolean);
const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const dec = new TextDecoder();

const dir = await Deno.makeTempDir({ prefix: "gatehouse-bench-start-" });
const denoDir = JSON.parse(
  dec.decode(
    new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).outputSync()
      .stdout,
  ),
).denoDir;

interface Subject {
  name: string;
  cmd: string[];
  env: Record<string, string>;
  https: number;
}

function caddyfile(admin: number, http: number, https: number): string {
  return `{
\tadmin localhost:${admin}
\thttp_port ${http}
\thttps_port ${https}
\tskip_install_trust
}
localhost {
\ttls internal
\trespond "hi"
}
`;
}

async function subject(
  name: string,
  cmd: (file: string) => string[],
  env: Record<string, string>,
): Promise<Subject> {
  const slug = name.replace(/[^a-z0-9]+/gi, "-");
  const home = `${dir}/${slug}`;
  await Deno.mkdir(home, { recursive: true });
  const https = freePort();
  const file = `${home}/Caddyfile`;
  await Deno.writeTextFile(file, caddyfile(freePort(), freePort(), https));
  return {
    name,
    cmd: cmd(file),
    https,
    env: {
      HOME: home,
      XDG_DATA_HOME: `${home}/data`,
      XDG_CONFIG_HOME: `${home}/config`,
      ...env,
    },
  };
}

const gh = (file: string) => [Deno.execPath(), "run", "-A", CLI, "run", "--config", file];
const subjects: Subject[] = [
  await subject("gatehouse (one process)", gh, { DENO_DIR: denoDir, GATEHOUSE_WORKERS: "1" }),
  await subject("gatehouse (workers)", gh, { DENO_DIR: denoDir }),
];
{
  // the floor: a bare Deno.serve with a certificate made by openssl, started the same way
  const bare = await subject(
    "bare Deno.serve",
    (f) => [Deno.execPath(), "run", "-A", f.replace(/Caddyfile$/, "serve.ts")],
    {
      DENO_DIR: denoDir,
    },
  );
  const home = bare.env.HOME;
  const out = new Deno.Command("openssl", {
    args: ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
      .concat(["-keyout", `${home}/key.pem`, "-out", `${home}/cert.pem`, "-days", "2"])
      .concat(["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]),
    stderr: "piped",
  }).outputSync();
  if (!out.success) throw new Error(`openssl: ${dec.decode(out.stderr)}`);
  const script = bare.cmd.at(-1)!;
  await Deno.writeTextFile(
    script,
    `Deno.serve({ hostname: "127.0.0.1", port: ${bare.https}, onListen() {}, ` +
      `cert: Deno.readTextFileSync("${home}/cert.pem"), key: Deno.readTextFileSync("${home}/key.pem") }, ` +
      `() => new Response("hi"));\n`,
  );
  subjects.push(bare);
}
if (has("caddy")) {
  subjects.push(await subject("caddy 2.6.2", (f) => ["caddy", "run", "--config", f], {}));
}
const chosen = subjects.filter((s) => !ONLY || ONLY.some((o) => s.name.includes(o)));

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The shell command hyperfine times: start, poll until 200, kill the process group. */
function timed(s: Subject): string {
  const env = Object.entries(s.env).map(([k, v]) => `${k}=${quote(v)}`).join(" ");
  const url = `https://localhost:${s.https}/`;
  return [
    `env ${env} setsid ${s.cmd.map(quote).join(" ")} >>${
      quote(`${dir}/${s.https}.log`)
    } 2>&1 & p=$!`,
    `until [ "$(curl -sk -o /dev/null -w '%{http_code}' --resolve localhost:${s.https}:127.0.0.1 ${url})" = 200 ]; do sleep 0.01; done`,
    `/bin/kill -s KILL -- -$p`,
    `wait $p 2>/dev/null; true`,
  ].join("; ");
}

/** The floor: the same poll against nothing that starts (one failed curl, then true). */
function floor(): string {
  return `true & p=$!; curl -sk -o /dev/null --max-time 1 https://127.0.0.1:1/; wait $p; true`;
}

function runShell(cmd: string): void {
  const out = new Deno.Command("sh", { args: ["-c", cmd], stdout: "null", stderr: "piped" })
    .outputSync();
  if (!out.success) throw new Error(`${cmd}: ${dec.decode(out.stderr)}`);
}

// one untimed start each: the CA, the certificate and the Deno cache exist before timing
for (const s of chosen) runShell(timed(s));

const json = `${dir}/hyperfine.json`;
const hf = new Deno.Command("hyperfine", {
  args: [
    "--shell=sh",
    `--warmup=${WARMUP}`,
    `--runs=${RUNS}`,
    `--export-json=${json}`,
    "-n",
    "floor (poll only)",
    floor(),
    ...chosen.flatMap((s) => ["-n", s.name, timed(s)]),
  ],
  stdout: "inherit",
  stderr: "inherit",
}).outputSync();
if (!hf.success) throw new Error("hyperfine failed");
const results = JSON.parse(await Deno.readTextFile(json)).results as {
  command: string;
  mean: number;
  stddev: number;
  median: number;
  min: number;
  max: number;
}[];

async function idle(s: Subject): Promise<Memory> {
  const child = new Deno.Command("setsid", {
    args: s.cmd,
    env: s.env,
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (;;) {
      const out = new Deno.Command("curl", {
        args: ["-sk", "-o", "/dev/null", "-w", "%{http_code}", "--resolve"]
          .concat([`localhost:${s.https}:127.0.0.1`, `https://localhost:${s.https}/`]),
        stdout: "piped",
      }).outputSync();
      if (dec.decode(out.stdout) === "200") break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, IDLE_WAIT));
    return memoryOf(processTree(child.pid));
  } finally {
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch { /* gone */ }
    await child.status;
  }
}

const caddy = results.find((r) => r.command === "caddy 2.6.2");
console.log(
  `\n| server | first 200 after start, median s (min–max) | × Caddy | idle RSS MiB | ` +
    `idle PSS MiB | idle union MiB | processes |`,
);
console.log(`| --- | ---: | ---: | ---: | ---: | ---: | ---: |`);
const mib = (kib?: number) => kib === undefined ? "–" : (kib / 1024).toFixed(1);
for (const r of results) {
  const s = chosen.find((c) => c.name === r.command);
  const mem = s ? await idle(s) : undefined;
  console.log(
    `| ${r.command} | ${r.median.toFixed(3)} (${r.min.toFixed(3)}–${r.max.toFixed(3)}) | ${
      caddy ? (r.median / caddy.median).toFixed(2) : "–"
    } | ${mib(mem?.rss)} | ${mib(mem?.pss)} | ${mib(mem?.union)} | ${mem?.processes ?? "–"} |`,
  );
}
console.log(
  `\nload: ${
    dec.decode(new Deno.Command("uptime", { stdout: "piped" }).outputSync().stdout).trim()
  }`,
);
await Deno.remove(dir, { recursive: true });
