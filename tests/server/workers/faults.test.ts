/**
 * Faults and stops with worker processes: a worker killed with SIGKILL under load is replaced
 * with the running config (by a new process by default, by the spare with
 * `GATEHOUSE_SPARE_WORKER=1`) while the other serves on, and only the requests in flight on
 * the killed worker fail; a reload and a graceful stop finish the requests in flight on every
 * worker.
 */
import assert from "node:assert/strict";
import { call, freePort } from "../fixtures/helpers.ts";
import { finish, serve, up } from "../fixtures/process.ts";
import {
  answersByWorker,
  childrenOf,
  hit,
  parentOf,
  parse,
  siteWith,
  type Worker,
  workers,
} from "./_workers.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A keep-alive client: requests one after the other on one connection, reconnecting on error. */
interface Client {
  /**
   * The worker that answered last. A new connection made after a failure keeps it until it is
   * answered: made while the killed worker's socket was still closing, it may have been queued
   * there (and reset with it), which is that worker's failure too.
   */
  worker?: string;
  ok: number;
  okSinceKill: number;
  /** Failed requests, with the worker their connection was on. */
  failures: (string | undefined)[];
}

/** Reads one answer with a Content-Length body from a keep-alive connection. */
async function readAnswer(
  conn: Deno.Conn,
  buf: { rest: string },
): Promise<ReturnType<typeof parse>> {
  const chunk = new Uint8Array(16384);
  for (;;) {
    const end = buf.rest.indexOf("\r\n\r\n");
    if (end >= 0) {
      const len = Number(/\r\ncontent-length: *(\d+)/i.exec(buf.rest.slice(0, end))?.[1] ?? 0);
      if (buf.rest.length >= end + 4 + len) {
        const text = buf.rest.slice(0, end + 4 + len);
        buf.rest = buf.rest.slice(end + 4 + len);
        return parse(text);
      }
    }
    const n = await conn.read(chunk);
    if (n === null) throw new Error("connection closed");
    buf.rest += dec.decode(chunk.subarray(0, n));
  }
}

/** Lists the workers until `ok` holds for the list (at most 30 s). */
async function workersUntil(base: string, ok: (list: Worker[]) => boolean, what: string) {
  let list = await workers(base);
  for (let i = 0; !ok(list); i++) {
    assert.ok(i < 600, what);
    await new Promise((r) => setTimeout(r, 50));
    list = await workers(base);
  }
  return list;
}

/**
 * Kills worker 1 with SIGKILL while 16 keep-alive clients send requests to both workers; checks
 * that its replacement (a new process, or the spare) serves, that worker 2 serves on and that
 * only the killed worker's requests failed, and prints how long the replacement took.
 */
async function killUnderLoad(spare: boolean): Promise<void> {
  const port = freePort();
  const dir = await Deno.makeTempDir();
  const log = `${dir}/server.log`;
  const s = await serve(
    siteWith(port, "up", {
      logging: { logs: { default: { writer: { output: "file", filename: log }, level: "INFO" } } },
    }),
    ["--workers", "2"],
    undefined,
    spare ? { GATEHOUSE_SPARE_WORKER: "1" } : {},
  );
  const clients: Client[] = Array.from(
    { length: 16 },
    () => ({ ok: 0, okSinceKill: 0, failures: [] }),
  );
  let running = true;
  let killed = false;
  const request = enc.encode(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
  const loop = async (c: Client) => {
    while (running) {
      let conn: Deno.Conn;
      try {
        conn = await Deno.connect({ hostname: "127.0.0.1", port });
      } catch {
        c.failures.push(c.worker);
        continue;
      }
      const buf = { rest: "" };
      try {
        while (running) {
          await conn.write(request);
          const a = await readAnswer(conn, buf);
          if (a.status !== 200 || a.body !== "up") throw new Error(`answer ${a.status}`);
          c.worker = a.worker;
          c.ok++;
          if (killed) c.okSinceKill++;
        }
      } catch {
        if (running) c.failures.push(c.worker);
      } finally {
        try {
          conn.close();
        } catch { /* closed */ }
      }
    }
  };
  try {
    await up(s.base);
    await answersByWorker(port);
    const loops = clients.map(loop);
    // every connection answered at least once, on either worker
    for (let i = 0; clients.some((c) => c.ok === 0); i++) {
      assert.ok(i < 600, "the clients got answers");
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual([...new Set(clients.map((c) => c.worker))].sort(), ["1", "2"]);
    const primary = s.p.child.pid;
    let before: Worker[];
    if (spare) {
      // the spare is up: it takes the killed worker's place
      before = await workersUntil(s.base, (l) => l.length === 3, "the spare started");
    } else {
      // no spare: the primary's children are the two workers
      before = await workers(s.base);
      assert.deepEqual(before.map((w) => w.worker), [1, 2]);
      assert.deepEqual(childrenOf(primary).sort(), before.map((w) => w.pid).sort());
    }
    const standby = before.find((w) => w.worker === 0);
    const victim = before.find((w) => w.worker === 1)!;
    const onVictim = clients.filter((c) => c.worker === "1");
    const onOther = clients.filter((c) => c.worker === "2");
    const killedAt = performance.now();
    const killedWall = Date.now();
    Deno.kill(victim.pid, "SIGKILL");
    killed = true;
    // a new connection answered by worker 1 is its replacement: the killed one answers nothing
    let replacedMs = 0;
    for (;;) {
      assert.ok(performance.now() - killedAt < 60_000, "a replacement came up");
      const a = await hit(port).catch(() => undefined);
      if (a?.worker === "1") {
        replacedMs = performance.now() - killedAt;
        break;
      }
    }
    const after = await workers(s.base);
    const replacement = after.find((w) => w.worker === 1)!;
    if (standby) assert.equal(replacement.pid, standby.pid, "the spare took the place");
    else {
      assert.notEqual(replacement.pid, victim.pid);
      assert.equal(parentOf(replacement.pid), primary, "a new worker of the primary");
    }
    assert.equal(replacement.restarts, 1);
    assert.equal(after.find((w) => w.worker === 2)!.pid, before.find((w) => w.worker === 2)!.pid);
    // the other worker's connections keep being answered
    for (let i = 0; onOther.some((c) => c.okSinceKill === 0); i++) {
      assert.ok(i < 600, "worker 2's clients answered after the kill");
      await new Promise((r) => setTimeout(r, 20));
    }
    running = false;
    await Promise.all(loops);
    // what failed was on the killed worker; the other worker's connections failed nothing
    const failures = clients.flatMap((c) => c.failures);
    assert.ok(failures.every((w) => w === "1"), `failures by worker: ${failures}`);
    assert.ok(onOther.every((c) => c.failures.length === 0));
    assert.ok(onVictim.every((c) => c.failures.length >= 1), "each killed connection failed");
    // the primary's own account: when it saw the exit, when the replacement served
    const entries = (await Deno.readTextFile(log)).split("\n").filter(Boolean).map((l) =>
      JSON.parse(l)
    );
    const exited = entries.find((e) => e.msg.startsWith("worker exited unexpectedly"));
    const serving = entries.find((e) => e.msg === "worker serving" && e.pid === replacement.pid);
    assert.equal(exited?.pid, victim.pid);
    if (standby) {
      // another spare boots behind the one that took the place
      await workersUntil(
        s.base,
        (l) => l.some((w) => w.worker === 0 && w.pid !== standby.pid),
        "another spare started",
      );
    } else {
      assert.deepEqual(
        childrenOf(primary).sort(),
        after.map((w) => w.pid).sort(),
        "no spare started",
      );
    }
    console.log(
      `  ${standby ? "the spare" : "no spare"}: the primary saw the exit ${
        (exited.ts * 1000 - killedWall).toFixed(0)
      } ms after SIGKILL and the replacement served ${
        (serving.ts * 1000 - killedWall).toFixed(0)
      } ms after it; a new connection of this (loaded) test was answered by it after ` +
        `${replacedMs.toFixed(0)} ms; ${failures.length} failed requests of ` +
        `${clients.reduce((n, c) => n + c.ok, 0)} (${onVictim.length} connections were on the ` +
        `killed worker)`,
    );
  } finally {
    running = false;
    await call(s.base, "POST", "/stop").catch(() => {});
    assert.equal(await finish(s.p, s.dir), 0, s.p.output());
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test(
  "workers: a worker killed with SIGKILL under load is replaced by a new process; only its requests in flight fail",
  () => killUnderLoad(false),
);

Deno.test(
  "workers: with GATEHOUSE_SPARE_WORKER=1 the spare takes a killed worker's place; only its requests in flight fail",
  () => killUnderLoad(true),
);

/** An upstream that holds every request until released, noting which worker sent it. */
function holdingUpstream() {
  const held: { worker: string; release: () => void }[] = [];
  let arrived = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const release = Promise.withResolvers<void>();
    held.push({ worker: req.headers.get("x-worker") ?? "", release: release.resolve });
    arrived.resolve();
    await release.promise;
    return new Response("done");
  });
  return {
    port: server.addr.port,
    held,
    async next() {
      await arrived.promise;
      arrived = Promise.withResolvers<void>();
    },
    releaseAll() {
      for (const h of held.splice(0)) h.release();
    },
    stop: () => server.shutdown(),
  };
}

/** Sends requests (each on a new connection) until the upstream holds some from both workers. */
async function inFlightOnBoth(port: number, upstream: ReturnType<typeof holdingUpstream>) {
  const answers: Promise<ReturnType<typeof parse>>[] = [];
  for (let i = 0; new Set(upstream.held.map((h) => h.worker)).size < 2; i++) {
    assert.ok(i < 60, "requests reached the upstream from both workers");
    const arrived = upstream.next();
    answers.push(hit(port, "/slow"));
    await arrived;
  }
  return answers;
}

Deno.test("workers: a reload and a graceful stop finish the requests in flight on every worker", async () => {
  const port = freePort();
  const upstream = holdingUpstream();
  const config = siteWith(port, "fast") as {
    apps: { http: { servers: { s: { routes: unknown[] } } } };
  };
  config.apps.http.servers.s.routes.unshift({
    match: [{ path: ["/slow"] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: `127.0.0.1:${upstream.port}` }],
      headers: { request: { set: { "X-Worker": ["{env.GATEHOUSE_WORKER}"] } } },
    }],
  });
  const s = await serve(config, ["--workers", "2"]);
  try {
    await up(s.base);
    // a reload while requests are in flight on both workers
    let answers = await inFlightOnBoth(port, upstream);
    const patched = await call(
      s.base,
      "PATCH",
      "/config/apps/http/servers/s/routes/1/handle/1/body",
      JSON.stringify("fast again"),
    );
    assert.equal(patched.status, 200, patched.body);
    assert.deepEqual([...(await answersByWorker(port)).values()], ["fast again", "fast again"]);
    upstream.releaseAll();
    for (const a of await Promise.all(answers)) assert.deepEqual([a.status, a.body], [200, "done"]);

    // a graceful stop while requests are in flight on both workers
    answers = await inFlightOnBoth(port, upstream);
    assert.equal((await call(s.base, "POST", "/stop")).status, 200);
    upstream.releaseAll();
    for (const a of await Promise.all(answers)) assert.deepEqual([a.status, a.body], [200, "done"]);
    assert.equal(await finish(s.p, s.dir), 0, s.p.output());
  } finally {
    try {
      s.p.child.kill("SIGKILL");
    } catch { /* exited */ }
    await s.p.status;
    await upstream.stop();
  }
});
