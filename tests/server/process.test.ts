/**
 * The server as a real process: `deno run -A cli.ts run ...` on loopback. Signals, exit
 * codes, pidfile, --resume after kill -9, start/stop/reload, validate, adapt, --envfile.
 */
import assert from "node:assert/strict";
import {
  call,
  CLI_TEST_APP,
  type CliProcess,
  freePort,
  runCli,
  siteConfig,
  spawnCli,
  tempEnv,
  until,
} from "./fixtures/helpers.ts";

const QUIET = { logs: { default: { writer: { output: "discard" } } } };

async function up(base: string): Promise<void> {
  await until(
    async () => (await call(base, "GET", "/config/")).status === 200,
    30000,
    `admin at ${base}`,
  );
}

async function serve(config: unknown, extraArgs: string[] = [], script?: string) {
  const t = await tempEnv();
  const port = freePort();
  const file = `${t.dir}/config.json`;
  await Deno.writeTextFile(file, JSON.stringify(config));
  const p = spawnCli(
    ["run", "-c", file, ...extraArgs],
    { ...t.env, GATEHOUSE_ADMIN: `127.0.0.1:${port}` },
    t.dir,
    false,
    script,
  );
  return { ...t, p, base: `http://127.0.0.1:${port}`, port, file };
}

async function finish(p: CliProcess, dir: string): Promise<number> {
  const s = await p.status;
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  return s.code;
}

Deno.test("run serves; POST /stop exits 0 and removes the pidfile; SIGUSR1/SIGUSR2/SIGHUP are ignored", async () => {
  const site = freePort();
  const s = await serve({
    logging: QUIET,
    apps: {
      http: {
        servers: {
          a: {
            listen: [`127.0.0.1:${site}`],
            routes: [{ handle: [{ handler: "static_response", body: "up" }] }],
          },
        },
      },
    },
  }, ["--pidfile", "PIDFILE"]);
  await up(s.base);
  assert.equal(await (await fetch(`http://127.0.0.1:${site}/`)).text(), "up");
  await until(
    async () => (await Deno.readTextFile(`${s.dir}/PIDFILE`)).trim() === String(s.p.child.pid),
    10000,
    "pidfile",
  );
  for (const sig of ["SIGUSR1", "SIGUSR2", "SIGHUP"] as const) s.p.child.kill(sig);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await call(s.base, "GET", "/config/")).status, 200);
  assert.equal((await call(s.base, "POST", "/stop")).status, 200);
  const dir = s.dir;
  assert.equal((await s.p.status).code, 0);
  await assert.rejects(Deno.stat(`${dir}/PIDFILE`));
  await finish(s.p, dir);
});

Deno.test("SIGINT and SIGTERM exit gracefully with 0; a second SIGINT forces exit 2", async () => {
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    const s = await serve({ logging: QUIET });
    await up(s.base);
    s.p.child.kill(sig);
    assert.equal(await finish(s.p, s.dir), 0, sig);
  }
  const s = await serve(
    { logging: QUIET, apps: { gatehouse_test: { stop_delay_ms: 20000 } } },
    [],
    CLI_TEST_APP,
  );
  await up(s.base);
  s.p.child.kill("SIGINT");
  await new Promise((r) => setTimeout(r, 500));
  s.p.child.kill("SIGINT");
  assert.equal(await finish(s.p, s.dir), 2);
});

Deno.test("SIGQUIT exits 2 at once but removes the storage locks it holds", async () => {
  const t = await tempEnv();
  const cfg = {
    logging: QUIET,
    storage: { module: "file_system", root: `${t.dir}/store` },
    apps: { gatehouse_test: { lock: "issue_cert_example.com", stop_delay_ms: 20000 } },
  };
  const s = await serve(cfg, [], CLI_TEST_APP);
  await up(s.base);
  const lockFile = `${t.dir}/store/locks/issue_cert_example.com.lock`;
  await until(async () => (await Deno.stat(lockFile)).isFile, 10000, "lock file");
  s.p.child.kill("SIGQUIT");
  assert.equal(await finish(s.p, s.dir), 2);
  await assert.rejects(Deno.stat(lockFile));
  await Deno.remove(t.dir, { recursive: true });
});

Deno.test("exit 1 on startup failure; exit 3 when cleanup fails", async () => {
  const t = await tempEnv();
  const bad = `${t.dir}/bad.json`;
  await Deno.writeTextFile(bad, JSON.stringify({ apps: { no_such_app: {} } }));
  const port = freePort();
  const r = await runCli(["run", "-c", bad], { ...t.env, GATEHOUSE_ADMIN: `127.0.0.1:${port}` });
  assert.equal(r.code, 1);
  assert.match(r.out, /unknown module: no_such_app/);
  const missing = await runCli(["run", "-c", `${t.dir}/missing.json`], t.env);
  assert.equal(missing.code, 1);
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const inUse = await runCli(["run"], {
    ...t.env,
    GATEHOUSE_ADMIN: `127.0.0.1:${(busy.addr as Deno.NetAddr).port}`,
  });
  busy.close();
  assert.equal(inUse.code, 1);
  await Deno.remove(t.dir, { recursive: true });

  const s = await serve(
    { logging: QUIET, apps: { gatehouse_test: { fail_cleanup: true } } },
    [],
    CLI_TEST_APP,
  );
  await up(s.base);
  assert.equal((await call(s.base, "POST", "/stop")).status, 200);
  assert.equal(await finish(s.p, s.dir), 3);
});

Deno.test("--resume after kill -9 at several moments of a stream of writes loads the last autosaved config", async () => {
  const site = freePort();
  const first = siteConfig(0, `127.0.0.1:${site}`, "r0");
  delete (first as { admin?: unknown }).admin;
  (first as Record<string, unknown>).logging = QUIET;
  const s = await serve(first);
  let proc = s.p;
  let base = s.base;
  await up(base);
  let acked = 0;
  let sent = 0;
  const other = `${s.dir}/other.json`;
  await Deno.writeTextFile(other, JSON.stringify({ apps: { no_such_app: {} } }));
  for (const killAfter of [3, 10, 20]) {
    let stop = false;
    const target = acked + killAfter;
    const writers = Array.from({ length: 3 }, async () => {
      while (!stop) {
        const n = ++sent;
        try {
          const r = await call(base, "POST", "/config/apps/http/servers/srv0/routes", {
            match: [{ path: [`/w${n}`] }],
            handle: [{ handler: "static_response", body: `w${n}` }],
          });
          if (r.status === 200) acked++;
        } catch {
          return;
        }
      }
    });
    await until(() => acked >= target, 30000, "acknowledged writes");
    proc.child.kill("SIGKILL");
    stop = true;
    await Promise.all(writers);
    assert.equal((await proc.status).code, 137);
    const saved = JSON.parse(await Deno.readTextFile(`${s.dir}/config/gatehouse/autosave.json`));
    const routes = saved.apps.http.servers.srv0.routes.length - 1;
    assert.ok(routes >= acked && routes <= sent, `${routes} routes, ${acked} acked, ${sent} sent`);
    acked = routes;
    // --resume overrides --config
    const port = freePort();
    proc = spawnCli(["run", "--resume", "-c", other], {
      ...s.env,
      GATEHOUSE_ADMIN: `127.0.0.1:${port}`,
    }, s.dir);
    base = `http://127.0.0.1:${port}`;
    await up(base);
    assert.deepEqual(JSON.parse((await call(base, "GET", "/config/")).body), saved);
    // temp files an interrupted autosave may leave are removed at startup
    await until(
      () => [...Deno.readDirSync(`${s.dir}/config/gatehouse`)].length === 1,
      10000,
      "autosave to finish",
    );
    assert.deepEqual([...Deno.readDirSync(`${s.dir}/config/gatehouse`)].map((e) => e.name), [
      "autosave.json",
    ]);
    assert.equal(await (await fetch(`http://127.0.0.1:${site}/`)).text(), "r0");
  }
  proc.child.kill("SIGTERM");
  assert.equal(await finish(proc, s.dir), 0);
});

Deno.test("start returns once running; reload changes it (no-op unless --force); stop ends it", async () => {
  const t = await tempEnv();
  const admin = freePort();
  const site = freePort();
  const cfg = `${t.dir}/site.json`;
  const write = (body: string) =>
    Deno.writeTextFile(
      cfg,
      JSON.stringify({ ...siteConfig(admin, `127.0.0.1:${site}`, body), logging: QUIET }),
    );
  await write("one");
  const envFile = `${t.dir}/env`;
  await Deno.writeTextFile(envFile, 'export GREETING="hi\\nthere" # comment\n');
  const start = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      new URL("../../deno.json", import.meta.url).pathname,
      new URL("../../cli.ts", import.meta.url).pathname,
      "start",
      "-c",
      cfg,
      "--envfile",
      envFile,
      "--pidfile",
      `${t.dir}/pid`,
    ],
    env: t.env,
    cwd: t.dir,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn().status;
  assert.equal(start.code, 0);
  const base = `http://127.0.0.1:${admin}`;
  assert.equal((await call(base, "GET", "/config/")).status, 200); // already running when start returned
  assert.equal(await (await fetch(`http://127.0.0.1:${site}/`)).text(), "one");
  await write("two");
  assert.equal((await runCli(["reload", "-c", cfg], t.env)).code, 0);
  assert.equal(await (await fetch(`http://127.0.0.1:${site}/`)).text(), "two");
  assert.equal((await runCli(["reload", "-c", cfg], t.env)).code, 0);
  assert.equal(
    (await runCli(["reload", "-c", cfg, "--force", "--address", `127.0.0.1:${admin}`], t.env)).code,
    0,
  );
  const badReload = `${t.dir}/bad.json`;
  await Deno.writeTextFile(
    badReload,
    JSON.stringify({ admin: { listen: `127.0.0.1:${admin}` }, apps: { nope: {} } }),
  );
  const br = await runCli(["reload", "-c", badReload], t.env);
  assert.equal(br.code, 1);
  assert.match(br.out, /unknown module: nope/);
  assert.equal(await (await fetch(`http://127.0.0.1:${site}/`)).text(), "two");
  const noFile = await runCli(["reload"], t.env, t.dir);
  assert.equal(noFile.code, 1);
  assert.match(noFile.out, /no config file/);
  assert.equal((await runCli(["stop", "-c", cfg], t.env)).code, 0);
  await until(
    async () => {
      try {
        await fetch(`${base}/config/`).then((r) => r.body?.cancel());
        return false;
      } catch {
        return true;
      }
    },
    15000,
    "server to stop",
  );
  assert.equal((await runCli(["stop", "--address", `127.0.0.1:${admin}`], t.env)).code, 1);
  await Deno.remove(t.dir, { recursive: true });
});

Deno.test("--envfile feeds run (GATEHOUSE_ADMIN from the file) and environ; validate and adapt exit codes", async () => {
  const t = await tempEnv();
  const port = freePort();
  await Deno.writeTextFile(
    `${t.dir}/.env`,
    `# admin address\nexport GATEHOUSE_ADMIN=127.0.0.1:${port}\nMULTI="a\nb"\n`,
  );
  const env = await runCli(["environ", "--envfile", `${t.dir}/.env`], t.env);
  assert.equal(env.code, 0);
  assert.match(env.out, new RegExp(`GATEHOUSE_ADMIN=127.0.0.1:${port}`));
  assert.match(env.out, /MULTI=a\nb/);
  const p = spawnCli(["run", "--envfile", `${t.dir}/.env`, "--environ"], t.env, t.dir);
  await up(`http://127.0.0.1:${port}`);
  p.child.kill("SIGTERM");
  assert.equal((await p.status).code, 0);
  await Deno.writeTextFile(`${t.dir}/bad.env`, 'A="unterminated\n');
  assert.equal((await runCli(["run", "--envfile", `${t.dir}/bad.env`], t.env)).code, 1);

  await Deno.writeTextFile(`${t.dir}/ok.json5`, "{ apps: { http: { servers: {} } }, // ok\n}");
  const v = await runCli(["validate", "-c", `${t.dir}/ok.json5`], t.env);
  assert.equal(v.code, 0, v.out);
  assert.match(v.out, /Valid configuration/);
  await Deno.writeTextFile(`${t.dir}/bad.json`, JSON.stringify({ apps: { nope: {} } }));
  assert.equal((await runCli(["validate", "-c", `${t.dir}/bad.json`], t.env)).code, 1);
  const a = await runCli(["adapt", "-c", `${t.dir}/ok.json5`, "-a", "json5"], t.env);
  assert.equal(a.code, 0);
  assert.deepEqual(JSON.parse(a.stdout), { apps: { http: { servers: {} } } });
  assert.equal(
    (await runCli(["adapt", "-c", `${t.dir}/bad.json`, "-a", "json", "--validate"], t.env)).code,
    1,
  );
  assert.equal((await runCli(["adapt", "-c", `${t.dir}/ok.json5`, "-a", "nope"], t.env)).code, 1);
  await Deno.remove(t.dir, { recursive: true });
});

Deno.test("the stdout writer writes JSON log lines to stdout; --watch reloads a changed file", async () => {
  const site = freePort();
  const cfg = (body: string) => ({
    logging: { logs: { default: { writer: { output: "stdout" }, encoder: { format: "json" } } } },
    apps: {
      http: {
        servers: {
          a: {
            listen: [`127.0.0.1:${site}`],
            routes: [{ handle: [{ handler: "static_response", body }] }],
          },
        },
      },
    },
  });
  const s = await serve(cfg("w1"), ["--watch"]);
  await up(s.base);
  await until(() => s.p.stdout().includes("watching config file"), 15000, "the watcher");
  await Deno.writeTextFile(s.file, JSON.stringify(cfg("w2")));
  await until(
    async () => (await (await fetch(`http://127.0.0.1:${site}/`)).text()) === "w2",
    15000,
    "watch reload",
  );
  s.p.child.kill("SIGTERM");
  const out = s.p.stdout;
  assert.equal(await finish(s.p, s.dir), 0);
  const logs = out().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  assert.ok(logs.some((l) => l.logger === "admin.api" && l.msg === "received request"));
  assert.ok(logs.every((l) => typeof l.ts === "number" && typeof l.level === "string"));
});

Deno.test("graceful exit drains in-flight requests; the grace period cuts the rest", async () => {
  const slow = freePort();
  const s = await serve(
    { logging: QUIET, apps: { gatehouse_test: { listen: `127.0.0.1:${slow}`, delay_ms: 1500 } } },
    [],
    CLI_TEST_APP,
  );
  await up(s.base);
  const inflight = fetch(`http://127.0.0.1:${slow}/`).then((r) => r.text());
  await new Promise((r) => setTimeout(r, 300));
  s.p.child.kill("SIGTERM");
  assert.equal(await inflight, "slow ");
  assert.equal(await finish(s.p, s.dir), 0);

  const slow2 = freePort();
  const g = await serve(
    {
      logging: QUIET,
      apps: {
        http: { grace_period: "300ms", servers: {} },
        gatehouse_test: { listen: `127.0.0.1:${slow2}`, delay_ms: 20000 },
      },
    },
    [],
    CLI_TEST_APP,
  );
  await up(g.base);
  const cut = fetch(`http://127.0.0.1:${slow2}/`).then((r) => r.text(), (e: Error) => e);
  await new Promise((r) => setTimeout(r, 300));
  const t0 = Date.now();
  g.p.child.kill("SIGTERM");
  assert.equal(await finish(g.p, g.dir), 0);
  assert.ok(Date.now() - t0 < 10000, "exited within the grace period, not after the 20 s request");
  assert.ok(
    (await cut) instanceof Error,
    "the request still running after the grace period was cut",
  );
});

Deno.test("start exits 1 when the background process fails; stop works over a unix socket admin endpoint", async () => {
  const t = await tempEnv();
  const bad = `${t.dir}/bad.json`;
  await Deno.writeTextFile(bad, JSON.stringify({ apps: { no_such_app: {} } }));
  const start = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      new URL("../../deno.json", import.meta.url).pathname,
      new URL("../../cli.ts", import.meta.url).pathname,
      "start",
      "-c",
      bad,
    ],
    env: { ...t.env, GATEHOUSE_ADMIN: `127.0.0.1:${freePort()}` },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn().status;
  assert.equal(start.code, 1);
  const sock = `unix/${t.dir}/admin.sock`;
  const p = spawnCli(["run"], { ...t.env, GATEHOUSE_ADMIN: sock }, t.dir);
  const client = Deno.createHttpClient({
    proxy: { transport: "unix", path: `${t.dir}/admin.sock` },
  });
  await until(
    async () => {
      const r = await fetch("http://localhost/config/", { client });
      await r.body?.cancel();
      return r.status === 200;
    },
    30000,
    "admin socket",
  );
  client.close();
  const stop = await runCli(["stop", "--address", sock], t.env);
  assert.equal(stop.code, 0, stop.out);
  assert.equal(await finish(p, t.dir), 0);
});
