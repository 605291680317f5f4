/**
 * SIGUSR1, SIGUSR2 and SIGHUP are ignored by every kind of server process (`run`, `start`,
 * `file-server`, `reverse-proxy`, `respond`): after the signals the process owns exactly the
 * listening sockets it owned before (in particular Deno's inspector did not open 9229), it still
 * serves, and its output holds nothing but the "signal ignored" lines.
 */
import assert from "node:assert/strict";
import { CLI, DENO_JSON, freePort, spawnCli, tempEnv, until } from "./fixtures/helpers.ts";
import { alive, listeningSockets, refuses } from "./fixtures/sockets.ts";

const INSPECTOR_PORT = 9229;
/** Deno arms its SIGUSR1 inspector trigger 500 ms after start; wait well past it. */
const ARMED_MS = 1500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function serves(url: string, body: string): Promise<boolean> {
  const r = await fetch(url);
  return (await r.text()) === body;
}

/** The lines of `text` after `from` chars that are not ignored-signal log records. */
function unexpectedLines(text: string, from: number): string[] {
  return text.slice(from).split("\n").filter((l) => l.trim() !== "").filter((l) => {
    try {
      const rec = JSON.parse(l);
      return !(rec.msg === "signal ignored; use reload or the admin API" &&
        ["SIGUSR2", "SIGHUP"].includes(rec.signal));
    } catch {
      return true;
    }
  });
}

/**
 * Sends the three signals to `pid` once it serves `url`, then checks that nothing changed.
 * `output` reads everything the process wrote so far.
 */
async function checkIgnored(pid: number, url: string, body: string, output: () => string) {
  await until(() => serves(url, body), 30000, `${url} to serve`);
  await sleep(ARMED_MS);
  const before = await listeningSockets(pid);
  assert.ok(before.length > 0, "the process listens somewhere");
  const inspectorFree = await refuses(INSPECTOR_PORT);
  const mark = output().length;
  for (const sig of ["SIGUSR1", "SIGUSR2", "SIGHUP"] as const) Deno.kill(pid, sig);
  await sleep(1000);
  assert.ok(alive(pid), "the process is still running");
  assert.deepEqual(await listeningSockets(pid), before, "no new listening socket");
  if (inspectorFree) assert.ok(await refuses(INSPECTOR_PORT), "9229 still refuses");
  assert.ok(await serves(url, body), "still serves");
  assert.deepEqual(unexpectedLines(output(), mark), [], "nothing but the ignored-signal lines");
  assert.doesNotMatch(output(), /Debugger listening|inspect/i);
}

function siteConfig(port: number, body: string) {
  return {
    apps: {
      http: {
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            routes: [{ handle: [{ handler: "static_response", body }] }],
          },
        },
      },
    },
  };
}

Deno.test("run: SIGUSR1/SIGUSR2/SIGHUP change nothing; no inspector listener appears", async () => {
  const t = await tempEnv();
  const site = freePort();
  await Deno.writeTextFile(`${t.dir}/c.json`, JSON.stringify(siteConfig(site, "run")));
  const p = spawnCli(["run", "-c", `${t.dir}/c.json`], {
    ...t.env,
    GATEHOUSE_ADMIN: `127.0.0.1:${freePort()}`,
  });
  try {
    await checkIgnored(p.child.pid, `http://127.0.0.1:${site}/`, "run", p.output);
  } finally {
    p.child.kill("SIGTERM");
    assert.equal((await p.status).code, 0);
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("start: the background server ignores the signals too", async () => {
  const t = await tempEnv();
  const site = freePort();
  const admin = freePort();
  await Deno.writeTextFile(`${t.dir}/c.json`, JSON.stringify(siteConfig(site, "start")));
  const pidfile = `${t.dir}/pid`;
  const p = spawnCli(["start", "-c", `${t.dir}/c.json`, "--pidfile", pidfile], {
    ...t.env,
    GATEHOUSE_ADMIN: `127.0.0.1:${admin}`,
  });
  // the background process keeps the output pipes open: wait for `start` itself only
  assert.equal((await p.child.status).code, 0);
  let pid = 0;
  await until(async () => (pid = Number(await Deno.readTextFile(pidfile))) > 0, 10000, "pidfile");
  try {
    await checkIgnored(pid, `http://127.0.0.1:${site}/`, "start", p.output);
  } finally {
    Deno.kill(pid, "SIGTERM");
    await until(() => !alive(pid), 15000, "background server to exit");
    await p.status;
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("file-server, reverse-proxy and respond ignore the signals", async () => {
  const t = await tempEnv();
  await Deno.writeTextFile(`${t.dir}/index.html`, "files");
  const backend = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("upstream"),
  );
  try {
    const cases: [string[], string, string][] = [];
    const fs = freePort();
    cases.push([
      ["file-server", "--root", t.dir, "--listen", `127.0.0.1:${fs}`],
      `http://127.0.0.1:${fs}/`,
      "files",
    ]);
    const rp = freePort();
    cases.push([
      [
        "reverse-proxy",
        "--from",
        `http://127.0.0.1:${rp}`,
        "--to",
        `127.0.0.1:${backend.addr.port}`,
      ],
      `http://127.0.0.1:${rp}/`,
      "upstream",
    ]);
    const rs = freePort();
    cases.push([
      ["respond", "--listen", `127.0.0.1:${rs}`, "hello"],
      `http://127.0.0.1:${rs}/`,
      "hello",
    ]);
    for (const [args, url, body] of cases) {
      const p = spawnCli(args, t.env, t.dir);
      try {
        await checkIgnored(p.child.pid, url, body, p.output);
      } finally {
        p.child.kill("SIGTERM");
        assert.equal((await p.status).code, 0, args[0]);
      }
    }
  } finally {
    await backend.shutdown();
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("without the ffi permission the server says at start that SIGUSR1 is not covered", async () => {
  const t = await tempEnv();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--deny-ffi", "--config", DENO_JSON, CLI, "run"],
    env: { ...t.env, GATEHOUSE_ADMIN: `127.0.0.1:${freePort()}` },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let err = "";
  const dec = new TextDecoder();
  const reading = (async () => {
    for await (const c of child.stderr) err += dec.decode(c);
  })();
  const out = child.stdout.cancel();
  try {
    await until(() => err.includes("serving initial configuration"), 30000, "server start");
    const warning = err.split("\n").find((l) => l.includes("SIGUSR1 cannot be ignored"));
    assert.ok(warning, err);
    assert.equal(JSON.parse(warning).level, "warn");
    assert.match(warning, /--allow-ffi/);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await reading;
    await out;
    await Deno.remove(t.dir, { recursive: true });
  }
});
