/**
 * The server as a real process (`deno run -A cli.ts run ...` on loopback): signals, exit codes,
 * pidfile, graceful exit, --resume after kill -9.
 */
import assert from "node:assert/strict";
import {
  call,
  CLI_TEST_APP,
  freePort,
  runCli,
  siteConfig,
  spawnCli,
  tempEnv,
  until,
} from "./fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "./fixtures/process.ts";

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
