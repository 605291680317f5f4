import assert from "node:assert/strict";
import { startServer } from "../../admin.ts";
import "./fixtures/test_app.ts";
import { call, freePort, until } from "./fixtures/helpers.ts";

const QUIET = { logs: { default: { writer: { output: "discard" } } } };

function site(port: number, body: string, extra: Record<string, unknown> = {}) {
  return {
    logging: QUIET,
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            routes: [{ handle: [{ handler: "static_response", body }] }],
          },
        },
      },
      ...extra,
    },
  };
}

Deno.test("a failing /load rolls back while requests keep being served on the same sockets", async () => {
  const port = freePort();
  const s = await startServer({ adminAddress: "127.0.0.1:0", config: site(port, "v1") });
  const base = s.adminUrl!;
  const seen: string[] = [];
  const errors: string[] = [];
  let running = true;
  const clients = Array.from({ length: 4 }, async () => {
    while (running) {
      try {
        const r = await fetch(`http://127.0.0.1:${port}/`);
        const t = await r.text();
        if (r.status !== 200) errors.push(`status ${r.status}`);
        seen.push(t);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
  });
  const body = async () => await (await fetch(`http://127.0.0.1:${port}/`)).text();
  const blocker = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    for (let i = 2; i <= 6; i++) {
      assert.equal((await call(base, "POST", "/load", site(port, `v${i}`))).status, 200);
      assert.equal(await body(), `v${i}`);
      // provisioning failure: unknown handler
      const bad = structuredClone(site(port, "bad")) as ReturnType<typeof site>;
      (bad.apps.http.servers.srv0.routes[0].handle[0] as { handler: string }).handler =
        "no_such_handler";
      const r1 = await call(base, "POST", "/load", bad);
      assert.equal(r1.status, 400);
      assert.match(JSON.parse(r1.body).error, /no_such_handler/);
      assert.equal(await body(), `v${i}`);
      // listener failure: a second address already taken by someone else
      const taken = site(port, "taken");
      (taken.apps.http.servers as Record<string, unknown>).srv1 = {
        listen: [`127.0.0.1:${(blocker.addr as Deno.NetAddr).port}`],
        routes: [],
      };
      assert.equal((await call(base, "POST", "/load", taken)).status, 400);
      assert.equal(await body(), `v${i}`);
      // start failure after http already switched its listeners: the old handler comes back
      const late = site(port, "late", { gatehouse_test: { fail_start: true } });
      const r3 = await call(base, "POST", "/load", late);
      assert.equal(r3.status, 400);
      assert.match(JSON.parse(r3.body).error, /start failed on purpose/);
      assert.equal(await body(), `v${i}`);
      assert.equal(
        JSON.parse(
          (await call(base, "GET", "/config/apps/http/servers/srv0/routes/0/handle/0/body")).body,
        ),
        `v${i}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    running = false;
    await Promise.all(clients);
    blocker.close();
    await s.stop();
  }
  assert.deepEqual(errors, []);
  assert.ok(seen.length > 0);
  const bodies = new Set(seen);
  for (const b of ["bad", "taken", "late"]) assert.ok(!bodies.has(b), `served ${b}`);
});

Deno.test("listeners are reference-counted: kept sockets survive, dropped ones close, new ones open", async () => {
  const p1 = freePort();
  const p2 = freePort();
  const s = await startServer({ config: site(p1, "one") });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: p1 });
    const two = site(p1, "two");
    (two.apps.http.servers as Record<string, unknown>).srv1 = {
      listen: [`127.0.0.1:${p2}`],
      routes: [{ handle: [{ handler: "static_response", body: "second" }] }],
    };
    await s.load(two);
    // the connection opened before the reload is served by the new config
    await conn.write(
      new TextEncoder().encode(`GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
    );
    const text = await new Response(conn.readable).text();
    assert.match(text, /two$/);
    assert.equal(await (await fetch(`http://127.0.0.1:${p2}/`)).text(), "second");
    await s.load(site(p1, "three"));
    await assert.rejects(fetch(`http://127.0.0.1:${p2}/`));
    assert.equal(await (await fetch(`http://127.0.0.1:${p1}/`)).text(), "three");
    assert.equal(s.engine.pool.size, 1);
  } finally {
    await s.stop();
  }
  assert.equal(s.engine.pool.size, 0);
});

Deno.test("replaced modules are cleaned up; stop and cleanup run once per config", async () => {
  const { testAppEvents } = await import("./fixtures/test_app.ts");
  const s = await startServer({
    config: { logging: QUIET, apps: { gatehouse_test: { tag: "a" } } },
  });
  try {
    await s.load({ logging: QUIET, apps: { gatehouse_test: { tag: "b" } } });
    assert.deepEqual(testAppEvents.filter((e) => e.endsWith(" a")), [
      "create a",
      "start a",
      "stop a",
      "cleanup a",
    ]);
    await assert.rejects(
      s.load({ logging: QUIET, apps: { gatehouse_test: { tag: "c", fail_validate: true } } }),
      /validate failed/,
    );
    assert.deepEqual(testAppEvents.filter((e) => e.endsWith(" c")), ["create c", "cleanup c"]);
    assert.equal(
      (s.config() as { apps: { gatehouse_test: { tag: string } } }).apps.gatehouse_test.tag,
      "b",
    );
  } finally {
    await s.stop();
  }
  const { testAppEvents: ev } = await import("./fixtures/test_app.ts");
  assert.deepEqual(ev.filter((e) => e.endsWith(" b")), [
    "create b",
    "start b",
    "stop b",
    "cleanup b",
  ]);
});

Deno.test("a reload that drops an address frees it at once and lets its in-flight requests finish", async () => {
  const port = freePort();
  const s = await startServer({
    config: {
      logging: QUIET,
      apps: { gatehouse_test: { tag: "old", listen: `127.0.0.1:${port}`, delay_ms: 1500 } },
    },
  });
  try {
    const inflight = fetch(`http://127.0.0.1:${port}/`).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    await s.load({ logging: QUIET, apps: { gatehouse_test: { tag: "new" } } });
    assert.ok(Date.now() - t0 < 1000, "the reload did not wait for the slow request");
    await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port }).then((c) => c.close()));
    assert.equal(await inflight, "slow old");
  } finally {
    await s.stop();
  }
});

Deno.test("listeners on unix sockets: served, kept across reloads, removed when dropped", async () => {
  const dir = await Deno.makeTempDir();
  const sock = `${dir}/site.sock`;
  const cfg = (body: string) => ({
    logging: QUIET,
    apps: {
      http: {
        servers: {
          a: {
            listen: [`unix/${sock}`],
            routes: [{ handle: [{ handler: "static_response", body }] }],
          },
        },
      },
    },
  });
  const s = await startServer({ config: cfg("one") });
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: sock } });
  try {
    assert.equal(await (await fetch("http://x/", { client })).text(), "one");
    await s.load(cfg("two"));
    assert.equal(await (await fetch("http://x/", { client })).text(), "two");
    await s.load({ logging: QUIET });
    await until(
      async () => !(await Deno.stat(sock).then(() => true, () => false)),
      5000,
      "socket file removal",
    );
  } finally {
    client.close();
    await s.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("port-0 listeners keep their port across reloads and stay distinct within a config", async () => {
  const cfg = (body: string) => ({
    logging: QUIET,
    apps: {
      http: {
        servers: {
          a: {
            listen: ["127.0.0.1:0"],
            routes: [{ handle: [{ handler: "static_response", body: `a ${body}` }] }],
          },
          b: {
            listen: ["127.0.0.1:0"],
            routes: [{ handle: [{ handler: "static_response", body: `b ${body}` }] }],
          },
        },
      },
    },
  });
  const s = await startServer({ config: cfg("1") });
  try {
    const ports = async () => {
      const { runningHttpApps } = await import("../../lib/server/http/app.ts");
      const app = runningHttpApps().at(-1)!;
      const addrs = app.listenAddresses();
      return [addrs.a[0], addrs.b[0]].map((a) => Number(a.split(":").pop()));
    };
    const [pa, pb] = await ports();
    assert.notEqual(pa, pb);
    await s.load(cfg("2"));
    assert.deepEqual(await ports(), [pa, pb]);
    assert.equal(await (await fetch(`http://127.0.0.1:${pa}/`)).text(), "a 2");
    assert.equal(await (await fetch(`http://127.0.0.1:${pb}/`)).text(), "b 2");
  } finally {
    await s.stop();
  }
});
