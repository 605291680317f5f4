import assert from "node:assert/strict";
import { startServer } from "../../admin.ts";
import "./fixtures/test_app.ts";
import { testAppEvents } from "./fixtures/test_app.ts";
import { call, freePort, rawHttp } from "./fixtures/helpers.ts";

const QUIET = { logs: { default: { writer: { output: "discard" } } } };

function testConfig(extra: Record<string, unknown> = {}) {
  return {
    logging: QUIET,
    apps: { gatehouse_test: { tag: "t", items: [], counter: 0, ...extra } },
  };
}

async function withServer(
  fn: (base: string, s: Awaited<ReturnType<typeof startServer>>) => Promise<void>,
  config: unknown = testConfig(),
  opts: { maxBodyBytes?: number } = {},
) {
  const s = await startServer({ adminAddress: "127.0.0.1:0", config, ...opts });
  try {
    await fn(s.adminUrl!, s);
  } finally {
    await s.stop();
  }
}

Deno.test('GET /config/ answers the config with an Etag "<path> <hash>"', async () => {
  await withServer(async (base) => {
    const r = await call(base, "GET", "/config/apps/gatehouse_test/tag");
    assert.equal(r.status, 200);
    assert.equal(r.body, '"t"\n');
    assert.match(r.headers.get("etag")!, /^"\/config\/apps\/gatehouse_test\/tag [0-9a-f]{8}"$/);
    assert.equal(r.headers.get("content-type"), "application/json");
    const all = await call(base, "GET", "/config/");
    assert.deepEqual(JSON.parse(all.body).apps.gatehouse_test.tag, "t");
  });
});

Deno.test("POST/PUT/PATCH/DELETE on /config/ with Caddy semantics and precise statuses", async () => {
  await withServer(async (base) => {
    const p = "/config/apps/gatehouse_test";
    assert.equal((await call(base, "POST", `${p}/items`, { n: 1 })).status, 200);
    assert.equal((await call(base, "POST", `${p}/items/...`, [{ n: 2 }, { n: 3 }])).status, 200);
    assert.equal((await call(base, "PUT", `${p}/items/0`, { n: 0 })).status, 200);
    assert.equal((await call(base, "PATCH", `${p}/items/3`, { n: 33 })).status, 200);
    assert.equal((await call(base, "DELETE", `${p}/items/1`)).status, 200);
    assert.deepEqual(JSON.parse((await call(base, "GET", `${p}/items`)).body), [
      { n: 0 },
      { n: 2 },
      { n: 33 },
    ]);
    assert.equal((await call(base, "PUT", `${p}/tag`, JSON.stringify("x"))).status, 409);
    assert.equal((await call(base, "PUT", `${p}/newkey`, JSON.stringify("x"))).status, 200);
    assert.equal((await call(base, "PATCH", `${p}/missing`, 1)).status, 404);
    assert.equal((await call(base, "DELETE", `${p}/missing`)).status, 404);
    assert.equal((await call(base, "PATCH", `${p}/items/9`, 1)).status, 404);
    assert.equal((await call(base, "GET", `/config/apps/nope/deeper`)).status, 404);
    assert.equal((await call(base, "GET", `${p}/items/x`)).status, 400);
    const bad = await call(base, "POST", `${p}/items`, "{bad");
    assert.equal(bad.status, 400);
    assert.match(JSON.parse(bad.body).error, /decoding request body/);
    assert.equal(
      (await call(base, "POST", `${p}/items`, "1", { "content-type": "text/plain" })).status,
      400,
    );
    assert.equal((await call(base, "OPTIONS", "/config/")).status, 405);
    assert.equal((await call(base, "GET", "/load")).status, 405);
    assert.equal((await call(base, "PUT", "/stop")).status, 405);
    assert.equal((await call(base, "GET", "/adapt")).status, 405);
    const nf = await call(base, "GET", "/nothing");
    assert.equal(nf.status, 404);
    assert.ok(JSON.parse(nf.body).error);
  });
});

Deno.test("a mutation whose config fails to load is refused and changes nothing", async () => {
  await withServer(async (base) => {
    const before = (await call(base, "GET", "/config/")).body;
    const r = await call(base, "PATCH", "/config/apps/gatehouse_test/fail_provision", true, {});
    assert.equal(r.status, 404); // strict replace of a key that does not exist
    const r2 = await call(base, "POST", "/config/apps/gatehouse_test/fail_provision", true);
    assert.equal(r2.status, 400);
    assert.match(JSON.parse(r2.body).error, /provision failed on purpose/);
    assert.equal((await call(base, "GET", "/config/")).body, before);
  });
});

Deno.test("If-Match: a stale Etag is refused with 412; other scopes do not conflict", async () => {
  await withServer(async (base) => {
    const p = "/config/apps/gatehouse_test/items";
    const tagEtag = (await call(base, "GET", "/config/apps/gatehouse_test/tag")).headers.get(
      "etag",
    )!;
    const etag = (await call(base, "GET", p)).headers.get("etag")!;
    assert.equal((await call(base, "POST", p, 1, { "if-match": etag })).status, 200);
    const stale = await call(base, "POST", p, 2, { "if-match": etag });
    assert.equal(stale.status, 412);
    assert.deepEqual(JSON.parse(stale.body), {
      error: "If-Match header did not match current config hash",
    });
    // the tag scope did not change, so its Etag still holds
    assert.equal(
      (await call(base, "PATCH", "/config/apps/gatehouse_test/tag", JSON.stringify("u"), {
        "if-match": tagEtag,
      })).status,
      200,
    );
    assert.equal((await call(base, "POST", p, 3, { "if-match": "bad" })).status, 400);
    assert.equal((await call(base, "POST", p, 3, { "if-match": '"onlyone"' })).status, 400);
  });
});

Deno.test("200 concurrent conflicting If-Match PATCHes: exactly one wins per version, nothing lost", async () => {
  await withServer(async (base) => {
    const p = "/config/apps/gatehouse_test/counter";
    const etag = (await call(base, "GET", p)).headers.get("etag")!;
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => call(base, "PATCH", p, i + 1, { "if-match": etag })),
    );
    const wins = results.filter((r) => r.status === 200);
    assert.equal(wins.length, 1);
    assert.equal(results.filter((r) => r.status === 412).length, 199);
    // optimistic increments with retries: every increment lands exactly once
    assert.equal((await call(base, "PATCH", p, 0)).status, 200);
    const clients = 20;
    await Promise.all(Array.from({ length: clients }, async () => {
      for (let attempt = 0; attempt < 500; attempt++) {
        const g = await call(base, "GET", p);
        const r = await call(base, "PATCH", p, Number(g.body) + 1, {
          "if-match": g.headers.get("etag")!,
        });
        if (r.status === 200) return;
        assert.equal(r.status, 412);
      }
      throw new Error("too many retries");
    }));
    assert.equal(Number((await call(base, "GET", p)).body), clients);
    // 200 concurrent appends without If-Match are serialised: none lost
    await Promise.all(
      Array.from(
        { length: 200 },
        (_, i) => call(base, "POST", "/config/apps/gatehouse_test/items", i),
      ),
    );
    const items = JSON.parse(
      (await call(base, "GET", "/config/apps/gatehouse_test/items")).body,
    ) as number[];
    assert.deepEqual([...items].sort((a, b) => a - b), Array.from({ length: 200 }, (_, i) => i));
  });
});

Deno.test("/load: identical config is a no-op unless Cache-Control: must-revalidate", async () => {
  const cfg = testConfig({ tag: "noop" });
  await withServer(async (base) => {
    const creates = () => testAppEvents.filter((e) => e === "create noop").length;
    const n0 = creates();
    assert.equal((await call(base, "POST", "/load", cfg)).status, 200);
    assert.equal(creates(), n0);
    // key order does not matter
    assert.equal(
      (await call(base, "POST", "/load", { apps: cfg.apps, logging: cfg.logging })).status,
      200,
    );
    assert.equal(creates(), n0);
    assert.equal(
      (await call(base, "POST", "/load", cfg, { "cache-control": "must-revalidate" })).status,
      200,
    );
    assert.equal(creates(), n0 + 1);
    const bad = await call(base, "POST", "/load", { apps: { nope_app: {} } });
    assert.equal(bad.status, 400);
    assert.match(JSON.parse(bad.body).error, /unknown module: nope_app/);
    const unk = await call(base, "POST", "/load", { bogus_top: 1 });
    assert.equal(unk.status, 400);
    assert.equal(
      JSON.parse((await call(base, "GET", "/config/apps/gatehouse_test/tag")).body),
      "noop",
    );
  }, cfg);
});

Deno.test("/load and /adapt pick the adapter by Content-Type (json5; unknown → 400)", async () => {
  await withServer(async (base) => {
    const j5 = "{ // comment\n logging: " + JSON.stringify(QUIET) +
      ", apps: { gatehouse_test: { tag: 'j5', }, }, }";
    const a = await call(base, "POST", "/adapt", j5, { "content-type": "application/json5" });
    assert.equal(a.status, 200);
    assert.deepEqual(JSON.parse(a.body).result.apps.gatehouse_test, { tag: "j5" });
    assert.equal(
      (await call(base, "POST", "/load", j5, {
        "content-type": "application/json5; charset=utf-8",
      })).status,
      200,
    );
    assert.equal(
      JSON.parse((await call(base, "GET", "/config/apps/gatehouse_test/tag")).body),
      "j5",
    );
    const u = await call(base, "POST", "/load", "x", { "content-type": "text/nothing" });
    assert.equal(u.status, 400);
    assert.equal(JSON.parse(u.body).error, "unrecognized config adapter 'nothing'");
    const adaptJson = await call(base, "POST", "/adapt", { a: 1 });
    assert.deepEqual(JSON.parse(adaptJson.body), { result: { a: 1 } });
  });
});

Deno.test("/id/<id>/[subpath] addresses objects carrying @id", async () => {
  const cfg = testConfig({ items: [{ "@id": "first", v: 1 }] });
  await withServer(async (base) => {
    const g = await call(base, "GET", "/id/first");
    assert.deepEqual(JSON.parse(g.body), { "@id": "first", v: 1 });
    assert.match(g.headers.get("etag")!, /^"\/config\/apps\/gatehouse_test\/items\/0 /);
    assert.equal((await call(base, "PATCH", "/id/first/v", 2)).status, 200);
    assert.equal((await call(base, "PUT", "/id/first/w", 3)).status, 200);
    assert.equal((await call(base, "PUT", "/id/first/w", 3)).status, 409);
    assert.equal((await call(base, "DELETE", "/id/first/w")).status, 200);
    assert.equal((await call(base, "POST", "/id/first/list", [])).status, 200);
    assert.deepEqual(JSON.parse((await call(base, "GET", "/id/first")).body), {
      "@id": "first",
      v: 2,
      list: [],
    });
    assert.equal((await call(base, "GET", "/id/nope")).status, 404);
    assert.equal((await call(base, "GET", "/id/")).status, 400);
    const dup = await call(base, "POST", "/config/apps/gatehouse_test/items", { "@id": "first" });
    assert.equal(dup.status, 400);
  }, cfg);
});

Deno.test("DELETE /config/ unloads the config; the admin endpoint keeps running", async () => {
  await withServer(async (base, s) => {
    assert.equal((await call(base, "DELETE", "/config/")).status, 200);
    assert.equal((await call(base, "GET", "/config/")).body, "null\n");
    assert.ok(testAppEvents.includes("stop t"));
    assert.equal((await call(base, "POST", "/load", testConfig({ tag: "back" }))).status, 200);
    assert.equal(s.adminUrl, base);
  });
});

Deno.test("bodies over the limit are refused with 413", async () => {
  await withServer(
    async (base, s) => {
      const big = JSON.stringify({ apps: { gatehouse_test: { pad: "x".repeat(5000) } } });
      const r = await call(base, "POST", "/load", big);
      assert.equal(r.status, 413);
      // a declared Content-Length over the limit is refused before reading
      const port = Number(new URL(base).port);
      const raw = await rawHttp(
        port,
        `POST /load HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 999999999\r\nConnection: close\r\n\r\n{}`,
      );
      assert.equal(raw.status, 413);
      assert.equal(s.config() !== null, true);
    },
    testConfig(),
    { maxBodyBytes: 1000 },
  );
});

Deno.test("Host header must name an allowed origin (DNS rebinding defence)", async () => {
  await withServer(async (base) => {
    const port = Number(new URL(base).port);
    const get = (host: string) =>
      rawHttp(port, `GET /config/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    const evil = await get("evil.example:" + port);
    assert.equal(evil.status, 403);
    assert.match(evil.text, /host not allowed: evil.example/);
    assert.equal((await get(`localhost:${port}`)).status, 200);
    assert.equal((await get(`127.0.0.1:${port}`)).status, 200);
    assert.equal((await get(`[::1]:${port}`)).status, 200);
    assert.equal((await get(`localhost:${port + 1}`)).status, 403);
    // an absolute-form target's host wins over the Host header: it is checked too
    const absolute = (target: string) =>
      rawHttp(
        port,
        `GET ${target}/config/ HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`,
      );
    const forged = await absolute("http://evil.example");
    assert.equal(forged.status, 403);
    assert.match(forged.text, /host not allowed: evil.example/);
    assert.equal((await absolute(`http://localhost:${port + 1}`)).status, 403);
    assert.equal((await absolute(`http://localhost:${port}`)).status, 200);
    assert.equal((await absolute(`http://127.0.0.1:${port}`)).status, 200);
    const ws = await rawHttp(
      port,
      `GET /config/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
    );
    assert.equal(ws.status, 403);
  });
});

Deno.test("enforce_origin and origins: Origin must match; CORS header echoes it", async () => {
  const port = freePort();
  const cfg = {
    logging: QUIET,
    admin: {
      listen: `127.0.0.1:${port}`,
      enforce_origin: true,
      origins: ["127.0.0.1:" + port, "https://admin.example"],
    },
  };
  const s = await startServer({ config: cfg });
  try {
    const base = `http://127.0.0.1:${port}`;
    const none = await call(base, "GET", "/config/");
    assert.equal(none.status, 403);
    assert.match(none.body, /client is not allowed to access from origin ''/);
    const bad = await call(base, "GET", "/config/", undefined, { origin: "http://evil.example" });
    assert.equal(bad.status, 403);
    assert.match(bad.body, /not allowed to access from origin/);
    const ok = await call(base, "GET", "/config/", undefined, {
      origin: `http://127.0.0.1:${port}`,
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("access-control-allow-origin"), `http://127.0.0.1:${port}`);
    // scheme-qualified origins must match the scheme; Host must be in the list too
    const wrongScheme = await rawHttp(
      port,
      `GET /config/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://admin.example\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(wrongScheme.status, 403);
    const referer = await call(base, "GET", "/config/", undefined, {
      referer: `http://127.0.0.1:${port}/page`,
    });
    assert.equal(referer.status, 200);
    const localhost = await rawHttp(
      port,
      `GET /config/ HTTP/1.1\r\nHost: localhost:${port}\r\nOrigin: http://127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
    );
    assert.equal(localhost.status, 403); // explicit origins replace the loopback defaults
  } finally {
    await s.stop();
  }
});

Deno.test("admin on a unix socket; admin.disabled; admin.listen moves the endpoint", async () => {
  const dir = await Deno.makeTempDir();
  const sock = `${dir}/admin.sock`;
  const s = await startServer({ config: { logging: QUIET, admin: { listen: `unix/${sock}` } } });
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: sock } });
  try {
    assert.equal(s.adminAddress, `unix/${sock}`);
    const r = await fetch("http://localhost/config/admin/listen", { client });
    assert.equal(r.status, 200);
    assert.equal(await r.json(), `unix/${sock}`);
    const port = freePort();
    const moved = await fetch("http://localhost/load", {
      client,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ logging: QUIET, admin: { listen: `127.0.0.1:${port}` } }),
    });
    assert.equal(moved.status, 200);
    await moved.body?.cancel();
    assert.equal(s.adminAddress, `127.0.0.1:${port}`);
    assert.equal(
      (await call(`http://127.0.0.1:${port}`, "GET", "/config/admin/listen")).body,
      `"127.0.0.1:${port}"\n`,
    );
    assert.equal(
      (await call(`http://127.0.0.1:${port}`, "POST", "/load", {
        logging: QUIET,
        admin: { disabled: true },
      })).status,
      200,
    );
    assert.equal(s.adminAddress, undefined);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/config/`));
  } finally {
    client.close();
    await s.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("modules register admin routes for as long as their config runs; POST /stop stops", async () => {
  const cfg = testConfig({ tag: "routes", admin_route: "/test_app/" });
  await withServer(async (base, s) => {
    const r = await call(base, "GET", "/test_app/anything");
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body), { tag: "routes", path: "/test_app/anything" });
    assert.equal((await call(base, "POST", "/load", testConfig({ tag: "noroutes" }))).status, 200);
    assert.equal((await call(base, "GET", "/test_app/anything")).status, 404);
    assert.equal((await call(base, "POST", "/stop")).status, 200);
    assert.equal(await s.finished, 0);
  }, cfg);
});

Deno.test("admin.listen beats the default address; autosave follows admin.config.persist", async () => {
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const path = `${dir}/autosave.json`;
  const cfg = {
    logging: QUIET,
    admin: { listen: `127.0.0.1:${port}` },
    apps: { gatehouse_test: { tag: "saved" } },
  };
  const s = await startServer({ adminAddress: "127.0.0.1:0", autosavePath: path, config: cfg });
  try {
    assert.equal(s.adminAddress, `127.0.0.1:${port}`);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(path)), cfg);
    const base = `http://127.0.0.1:${port}`;
    assert.equal(
      (await call(base, "PATCH", "/config/apps/gatehouse_test/tag", JSON.stringify("changed")))
        .status,
      200,
    );
    assert.equal(JSON.parse(await Deno.readTextFile(path)).apps.gatehouse_test.tag, "changed");
    const noPersist = {
      ...cfg,
      admin: { ...cfg.admin, config: { persist: false } },
      apps: { gatehouse_test: { tag: "unsaved" } },
    };
    assert.equal((await call(base, "POST", "/load", noPersist)).status, 200);
    assert.equal(JSON.parse(await Deno.readTextFile(path)).apps.gatehouse_test.tag, "changed");
  } finally {
    await s.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("embedded without a default admin address: DELETE /config/ keeps the endpoint it came through", async () => {
  const port = freePort();
  const s = await startServer({
    config: { logging: QUIET, admin: { listen: `127.0.0.1:${port}` } },
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    assert.equal((await call(base, "DELETE", "/config/")).status, 200);
    assert.equal((await call(base, "GET", "/config/")).body, "null\n");
    assert.equal((await call(base, "POST", "/load", testConfig({ tag: "again" }))).status, 200);
  } finally {
    await s.stop();
  }
});

Deno.test("GET /reverse_proxy/upstreams answers [] with no proxy configured (as Caddy); other methods 405", async () => {
  await withServer(async (base) => {
    const r = await call(base, "GET", "/reverse_proxy/upstreams");
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "application/json");
    assert.equal(r.body, "[]\n");
    const post = await call(base, "POST", "/reverse_proxy/upstreams");
    assert.equal(post.status, 405);
    assert.deepEqual(JSON.parse(post.body), { error: "method not allowed" });
    assert.equal((await call(base, "GET", "/reverse_proxy/nope")).status, 404);
  });
});
