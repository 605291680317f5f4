/**
 * Worker processes (`run --workers N`): every worker serves each address, the admin API's
 * config tree stays exact (Etag/If-Match), and a change is atomic across workers: a config
 * one worker cannot provision, or one worker cannot start, leaves every worker on the old
 * config; a change under load fails no request. Each test runs a real primary and its
 * workers on loopback.
 */
import assert from "node:assert/strict";
import { call, CLI_TEST_APP, freePort, spawnCli, tempEnv, until } from "../fixtures/helpers.ts";
import { finish, serve, up } from "../fixtures/process.ts";
import { SERVER_V8_FLAGS } from "../../../lib/server/workers/count.ts";
import {
  answersByWorker,
  childrenOf,
  hit,
  parentOf,
  siteWith,
  workerRoute,
  workers,
  wrk,
} from "./_workers.ts";

const BODY = "/config/apps/http/servers/s/routes/0/handle/1/body";

async function stop(s: Awaited<ReturnType<typeof serve>>): Promise<number> {
  await call(s.base, "POST", "/stop").catch(() => {});
  return await finish(s.p, s.dir);
}

Deno.test("workers: two workers both serve every address; the admin API lists their pids", async () => {
  const port = freePort();
  const s = await serve(siteWith(port, "hello"), ["--workers", "2"]);
  try {
    await up(s.base);
    const seen = await answersByWorker(port);
    assert.deepEqual([...seen.keys()].sort(), ["1", "2"]);
    assert.deepEqual([...seen.values()], ["hello", "hello"]);
    // the two workers (no spare by default)
    const list = await workers(s.base);
    assert.deepEqual(list.map((w) => [w.worker, w.restarts, w.serving]), [
      [1, 0, true],
      [2, 0, true],
    ]);
    assert.equal(new Set(list.map((w) => w.pid)).size, 2);
    for (const w of list) assert.equal(parentOf(w.pid), s.p.child.pid);
    assert.deepEqual(childrenOf(s.p.child.pid).sort(), list.map((w) => w.pid).sort());
    // the primary was given no V8 flags: the workers, which serve, get the young-generation cap
    assert.ok(!cmdline(s.p.child.pid).some((a) => a.startsWith("--v8-flags")));
    for (const w of list) {
      assert.ok(cmdline(w.pid).includes(`--v8-flags=${SERVER_V8_FLAGS}`), cmdline(w.pid).join(" "));
    }
  } finally {
    assert.equal(await stop(s), 0, s.p.output());
  }
});

function cmdline(pid: number): string[] {
  return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
}

Deno.test("workers: V8 flags the program was given (DENO_V8_FLAGS) are the workers' own, not the default cap", async () => {
  const port = freePort();
  const s = await serve(siteWith(port, "hello"), ["--workers", "2"], undefined, {
    DENO_V8_FLAGS: "--max-semi-space-size=8",
  });
  try {
    await up(s.base);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["hello", "hello"]);
    const list = await workers(s.base);
    assert.equal(list.length, 2);
    for (const w of list) {
      assert.ok(!cmdline(w.pid).some((a) => a.startsWith("--v8-flags")), cmdline(w.pid).join(" "));
      const env = Deno.readTextFileSync(`/proc/${w.pid}/environ`).split("\0");
      assert.ok(env.includes("DENO_V8_FLAGS=--max-semi-space-size=8"));
    }
  } finally {
    assert.equal(await stop(s), 0, s.p.output());
  }
});

Deno.test("workers: If-Match is exact across workers; a change reaches every worker", async () => {
  const port = freePort();
  const s = await serve(siteWith(port, "one"), ["--workers", "2"]);
  try {
    await up(s.base);
    const got = await call(s.base, "GET", BODY);
    const etag = got.headers.get("etag")!;
    assert.equal(got.body, '"one"\n');
    const patched = await call(s.base, "PATCH", BODY, JSON.stringify("two"), {
      "if-match": etag,
    });
    assert.equal(patched.status, 200, patched.body);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["two", "two"]);
    // the scope changed: the old Etag is refused and nothing changes anywhere
    const stale = await call(s.base, "PATCH", BODY, JSON.stringify("three"), {
      "if-match": etag,
    });
    assert.equal(stale.status, 412, stale.body);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["two", "two"]);
    assert.equal((await call(s.base, "GET", BODY)).body, '"two"\n');
  } finally {
    assert.equal(await stop(s), 0, s.p.output());
  }
});

async function prlimitNofile(pid: number, soft: string): Promise<void> {
  const out = await new Deno.Command("prlimit", {
    args: ["--pid", String(pid), `--nofile=${soft}:`],
  })
    .output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

function softNofile(pid: number): string {
  const limits = Deno.readTextFileSync(`/proc/${pid}/limits`);
  return /^Max open files\s+(\S+)/m.exec(limits)![1];
}

Deno.test("workers: a config one worker cannot provision (no descriptor left for its new socket) leaves every worker on the old config", async () => {
  const port = freePort();
  const added = freePort();
  const s = await serve(siteWith(port, "old"), ["--workers", "2"]);
  try {
    await up(s.base);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["old", "old"]);
    const w2 = (await workers(s.base)).find((w) => w.worker === 2)!;
    const soft = softNofile(w2.pid);
    // worker 2 can open no descriptor any more: binding the new address fails there only
    await prlimitNofile(w2.pid, "3");
    let res;
    try {
      res = await call(s.base, "PATCH", "/config/apps/http/servers/s", {
        listen: [`127.0.0.1:${port}`, `127.0.0.1:${added}`],
        automatic_https: { disable: true },
        routes: [workerRoute("new")],
      });
    } finally {
      await prlimitNofile(w2.pid, soft);
    }
    assert.equal(res.status, 400, res.body);
    assert.match(JSON.parse(res.body).error, /^loading new config: worker 2: .*open files/i);
    // worker 1 had bound the new address: it was released, and both serve the old config
    await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port: added }));
    assert.deepEqual([...(await answersByWorker(port)).values()], ["old", "old"]);
    assert.equal((await call(s.base, "GET", BODY)).body, '"old"\n');
    // with descriptors again, the same change goes through on both
    const again = await call(s.base, "PATCH", "/config/apps/http/servers/s", {
      listen: [`127.0.0.1:${port}`, `127.0.0.1:${added}`],
      automatic_https: { disable: true },
      routes: [workerRoute("new")],
    });
    assert.equal(again.status, 200, again.body);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["new", "new"]);
    assert.deepEqual([...(await answersByWorker(added)).values()], ["new", "new"]);
  } finally {
    assert.equal(await stop(s), 0, s.p.output());
  }
});

Deno.test("workers: a config one worker cannot start (a port only one process can bind) is rolled back on the workers that started it", async () => {
  const port = freePort();
  const exclusive = freePort();
  const s = await serve(siteWith(port, "old"), ["--workers", "2"], CLI_TEST_APP);
  try {
    await up(s.base);
    const next = siteWith(port, "new") as { apps: Record<string, unknown> };
    next.apps.gatehouse_test = { exclusive_port: exclusive };
    const res = await call(s.base, "POST", "/load", next);
    assert.equal(res.status, 400, res.body);
    assert.match(
      JSON.parse(res.body).error,
      /^loading new config: worker [12]: starting app 'gatehouse_test': .*in use/i,
    );
    // the worker that started it stopped it again: the port is free, both serve the old config
    Deno.listen({ hostname: "127.0.0.1", port: exclusive }).close();
    assert.deepEqual([...(await answersByWorker(port)).values()], ["old", "old"]);
    assert.equal((await call(s.base, "GET", BODY)).body, '"old"\n');
  } finally {
    assert.equal(await stop(s), 0, s.p.output());
  }
});

Deno.test("workers: config changes under wrk load fail no request, and every worker ends on the last one", async () => {
  const port = freePort();
  const s = await serve(siteWith(port, "v0"), ["--workers", "2"]);
  try {
    await up(s.base);
    await answersByWorker(port);
    const load = wrk(`http://127.0.0.1:${port}/`, { seconds: 4, connections: 16 });
    let done = false;
    void load.then(() => (done = true));
    let changes = 0;
    while (!done) {
      const r = await call(s.base, "PATCH", BODY, JSON.stringify(`v${changes + 1}`));
      assert.equal(r.status, 200, r.body);
      changes++;
    }
    const { requests, failures, output } = await load;
    assert.ok(changes >= 1, "changes were made under load");
    assert.ok(requests > 0, output);
    assert.equal(failures, 0, output);
    assert.deepEqual([...(await answersByWorker(port)).values()], [`v${changes}`, `v${changes}`]);
    console.log(`  ${changes} changes under ${requests} requests, 0 failed`);
  } finally {
    assert.equal(await stop(s), 0, s.p.output());
  }
});

Deno.test("workers: respond --workers 2 serves from both workers and prints its address once", async () => {
  const t = await tempEnv();
  const port = freePort();
  const p = spawnCli(
    [
      "respond",
      "--workers",
      "2",
      "--listen",
      `127.0.0.1:${port}`,
      "-H",
      "X-Worker: {env.GATEHOUSE_WORKER}",
      "hi",
    ],
    t.env,
    t.dir,
  );
  try {
    await until(() => p.stdout().includes("\n"), 30_000, "the printed address");
    assert.equal(p.stdout(), `Server address: 127.0.0.1:${port}\n`);
    const seen = await answersByWorker(port);
    assert.deepEqual([...seen.keys()].sort(), ["1", "2"]);
    assert.deepEqual([...seen.values()], ["hi", "hi"]);
    assert.equal(childrenOf(p.child.pid).length, 2, "two workers");
  } finally {
    p.child.kill("SIGINT");
    assert.equal(await finish(p, t.dir), 0, p.output());
  }
});

Deno.test("workers: --workers 1 (or GATEHOUSE_WORKERS=1) is one process; a bad count is a usage error", async () => {
  const port = freePort();
  for (const [args, env] of [[["--workers", "1"], {}], [[], { GATEHOUSE_WORKERS: "1" }]] as const) {
    const s = await serve(siteWith(port, "single"), [...args], undefined, env);
    try {
      await up(s.base);
      const a = await hit(port);
      assert.equal(a.body, "single");
      assert.equal(a.worker, "", "no worker number: the process serves itself");
      assert.deepEqual(childrenOf(s.p.child.pid), []);
      assert.equal((await call(s.base, "GET", "/workers")).status, 404);
    } finally {
      assert.equal(await stop(s), 0, s.p.output());
    }
  }
  const t = await tempEnv();
  for (const [flag, env] of [["0", undefined], ["x", undefined], [undefined, "300"]]) {
    const p = spawnCli(
      ["run", ...(flag ? ["--workers", flag] : [])],
      { ...t.env, ...(env ? { GATEHOUSE_WORKERS: env } : {}) },
      t.dir,
    );
    assert.equal((await p.status).code, 1);
    assert.match(p.output(), /the number of worker processes must be 1 to 256 or auto/);
  }
  const p = spawnCli(["run", "--workers", "2"], { ...t.env, GATEHOUSE_SPARE_WORKER: "yes" }, t.dir);
  assert.equal((await p.status).code, 1);
  assert.match(p.output(), /GATEHOUSE_SPARE_WORKER must be 0 or 1, got "yes"/);
  await Deno.remove(t.dir, { recursive: true });
});

/** One request over a unix socket (a new connection), with the worker that answered. */
async function unixHit(path: string): Promise<{ body: string; worker: string }> {
  const client = Deno.createHttpClient(
    { proxy: { transport: "unix", path } } as Deno.CreateHttpClientOptions,
  );
  try {
    const res = await fetch("http://localhost/", { client });
    return { body: await res.text(), worker: res.headers.get("x-worker") ?? "" };
  } finally {
    client.close();
  }
}

Deno.test("workers: a unix socket address is served by worker 1 alone, and by its replacement", async () => {
  const port = freePort();
  const t = await Deno.makeTempDir();
  const sock = `${t}/site.sock`;
  const config = siteWith(port, "both") as {
    apps: { http: { servers: { s: { listen: string[] } } } };
  };
  config.apps.http.servers.s.listen.push(`unix/${sock}`);
  const s = await serve(config, ["--workers", "2"]);
  try {
    await up(s.base);
    assert.deepEqual([...(await answersByWorker(port)).keys()].sort(), ["1", "2"]);
    for (let i = 0; i < 10; i++) {
      assert.deepEqual(await unixHit(sock), { body: "both", worker: "1" });
    }
    const w1 = (await workers(s.base)).find((w) => w.worker === 1)!;
    Deno.kill(w1.pid, "SIGKILL");
    await until(
      async () =>
        (await workers(s.base)).some((w) => w.worker === 1 && w.pid !== w1.pid && w.serving),
      30_000,
      "worker 1's replacement",
    );
    assert.deepEqual(await unixHit(sock), { body: "both", worker: "1" });
  } finally {
    assert.equal(await stop(s), 0, s.p.output());
    await Deno.remove(t, { recursive: true });
  }
});

Deno.test("workers: --watch reloads every worker; --resume starts every worker on the autosaved config", async () => {
  const port = freePort();
  const s = await serve(siteWith(port, "first"), ["--workers", "2", "--watch"]);
  try {
    await up(s.base);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["first", "first"]);
    await Deno.writeTextFile(s.file, JSON.stringify(siteWith(port, "watched")));
    await until(
      async () => [...(await answersByWorker(port)).values()].join() === "watched,watched",
      30_000,
      "both workers on the watched file",
    );
  } finally {
    await call(s.base, "POST", "/stop").catch(() => {});
    assert.equal((await s.p.status).code, 0, s.p.output());
  }
  // the same directories again, with --resume: the autosaved (watched) config
  const again = spawnCli(
    ["run", "--resume", "--workers", "2"],
    { ...s.env, GATEHOUSE_ADMIN: `127.0.0.1:${s.port}` },
  );
  try {
    await up(s.base);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["watched", "watched"]);
  } finally {
    await call(s.base, "POST", "/stop").catch(() => {});
    assert.equal(await finish(again, s.dir), 0, again.output());
  }
});
