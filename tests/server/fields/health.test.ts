/**
 * Active health checks' `passes` and `fails`: a host is marked unhealthy only after `fails`
 * failed checks in a row, and healthy again only after `passes` good ones; by default one
 * check of either kind is enough.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";

Deno.test("reverse_proxy: health_checks.active passes and fails count checks in a row", async () => {
  let healthStatus = 200;
  let hits = 0;
  const up = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (new URL(req.url).pathname === "/health") {
      hits++;
      return new Response(null, { status: healthStatus });
    }
    return new Response("up");
  });
  const dial = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  const proxy = (active: Record<string, unknown>) => ({
    routes: [{
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial }],
        health_checks: { active: { uri: "/health", interval: "400ms", ...active } },
      }],
    }],
  });
  const srv = await startHttp({
    servers: {
      counted: { listen: ["127.0.0.1:0"], ...proxy({ fails: 3, passes: 2 }) },
    },
  });
  const status = async () => {
    const r = await fetch(srv.url("counted"));
    await r.body?.cancel();
    return r.status;
  };
  /** Waits for the next check to have run (and its result to be taken into account). */
  const nextCheck = async () => {
    const seen = hits;
    const end = Date.now() + 5000;
    while (hits === seen && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 100));
  };
  try {
    await nextCheck();
    assert.equal(await status(), 200);
    healthStatus = 500;
    await nextCheck();
    assert.equal(await status(), 200, "one failed check is not enough");
    await nextCheck();
    assert.equal(await status(), 200, "nor two");
    await nextCheck();
    assert.equal(await status(), 503, "three in a row make it unhealthy");
    healthStatus = 200;
    await nextCheck();
    assert.equal(await status(), 503, "one good check is not enough");
    await nextCheck();
    assert.equal(await status(), 200, "two in a row make it healthy again");

    // by default a single failed check is enough
    await srv.reload({ servers: { counted: { listen: ["127.0.0.1:0"], ...proxy({}) } } });
    await nextCheck();
    assert.equal(await status(), 200);
    healthStatus = 500;
    await nextCheck();
    assert.equal(await status(), 503);
  } finally {
    await srv.stop();
    await up.shutdown();
  }
});

Deno.test("reverse_proxy: health_checks.active max_size bounds the body expect_body reads", async () => {
  const up = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) =>
      new URL(req.url).pathname === "/health"
        ? new Response("x".repeat(5000) + "READY")
        : new Response("up"),
  );
  const dial = `127.0.0.1:${(up.addr as Deno.NetAddr).port}`;
  const proxy = (max: number) => ({
    listen: ["127.0.0.1:0"],
    routes: [{
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial }],
        health_checks: {
          active: { uri: "/health", interval: "1s", expect_body: "READY", max_size: max },
        },
      }],
    }],
  });
  const srv = await startHttp({ servers: { small: proxy(1000), big: proxy(100_000) } });
  try {
    const status = async (name: string) => {
      const end = Date.now() + 3000;
      while (true) {
        const r = await fetch(srv.url(name));
        await r.body?.cancel();
        if (r.status !== 200 || Date.now() > end) return r.status;
        if (name === "big") return 200;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    assert.equal(await status("small"), 503, "READY lies past max_size: the check fails");
    assert.equal(await status("big"), 200);
  } finally {
    await srv.stop();
    await up.shutdown();
  }
});
