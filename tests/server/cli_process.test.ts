/**
 * The command line against real processes: start/reload/stop, --envfile, environ, validate,
 * adapt, --watch, the stdout log writer, unix socket admin endpoints.
 */
import assert from "node:assert/strict";
import {
  call,
  freePort,
  runCli,
  siteConfig,
  spawnCli,
  tempEnv,
  until,
} from "./fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "./fixtures/process.ts";
import { SERVER_V8_FLAGS } from "../../lib/cli/start.ts";

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
  if (Deno.build.os === "linux") {
    // The background server runs with the memory-bounding V8 flags.
    const pid = (await Deno.readTextFile(`${t.dir}/pid`)).trim();
    const cmdline = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0");
    assert.ok(cmdline.includes(`--v8-flags=${SERVER_V8_FLAGS}`), cmdline.join(" "));
  }
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
