/**
 * `dynamic_upstreams` of `reverse_proxy` resolved from real DNS servers on loopback: `a`
 * from pebble-challtestsrv, `srv` from a dns2 server, `multi` from both. Each follows record
 * changes once `refresh` has passed (and not before), a failed lookup falls back to the static
 * upstreams or, with `grace_period`, keeps the last answer; the admin API lists what is in use.
 */
import assert from "node:assert/strict";
import { freePort, serve } from "../http/harness.ts";
import { challtestsrvAvailable, startChallTestSrv, startSrvServer } from "./dns_servers.ts";

/** A backend answering its name on `host:port`. */
function backend(name: string, hostname: string, port: number) {
  const server = Deno.serve({ hostname, port, onListen() {} }, () => new Response(name));
  return { close: () => server.shutdown() };
}

/** A port free on both 127.0.0.2 and 127.0.0.3. */
function sharedPort(): number {
  for (let i = 0; i < 20; i++) {
    const p = freePort();
    try {
      const a = Deno.listen({ hostname: "127.0.0.2", port: p });
      const b = Deno.listen({ hostname: "127.0.0.3", port: p });
      a.close();
      b.close();
      return p;
    } catch { /* taken: try another */ }
  }
  throw new Error("no shared port");
}

async function names(url: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await (await fetch(url)).text());
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name: "dynamic upstreams a: resolved from challtestsrv, following its changes after refresh",
  ignore: !challtestsrvAvailable(),
  async fn() {
    const dns = await startChallTestSrv();
    const port = sharedPort();
    const two = backend("two", "127.0.0.2", port);
    const three = backend("three", "127.0.0.3", port);
    const fallbackPort = freePort();
    const fallback = backend("static", "127.0.0.1", fallbackPort);
    await dns.setA("app.test", ["127.0.0.2"]);
    const srv = await serve([{
      match: [{ path: ["/missing"] }],
      handle: [{
        handler: "reverse_proxy",
        upstreams: [{ dial: `127.0.0.1:${fallbackPort}` }],
        dynamic_upstreams: {
          source: "a",
          name: "missing.test",
          port: String(port),
          resolver: { addresses: [`127.0.0.1:${dns.dnsPort}`] },
        },
      }],
    }, {
      handle: [{
        handler: "reverse_proxy",
        dynamic_upstreams: {
          source: "a",
          name: "{http.request.header.X-App}.test",
          port: String(port),
          refresh: "1s",
          resolver: { addresses: [`127.0.0.1:${dns.dnsPort}`] },
          dial_timeout: "2s",
          versions: { ipv4: true },
        },
        load_balancing: { selection_policy: { policy: "round_robin" } },
      }],
    }]);
    const ask = async (n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) {
        out.push(await (await fetch(srv.url(), { headers: { "x-app": "app" } })).text());
      }
      return out;
    };
    try {
      assert.deepEqual(await ask(3), ["two", "two", "two"]);
      const list = await (await srv.admin("/reverse_proxy/upstreams")).json() as {
        address: string;
      }[];
      assert.ok(list.some((u) => u.address === `127.0.0.2:${port}`), JSON.stringify(list));

      await dns.setA("app.test", ["127.0.0.3"]);
      // the cached answer holds until refresh has passed
      assert.deepEqual(await ask(2), ["two", "two"]);
      await sleep(1100);
      assert.deepEqual(await ask(2), ["three", "three"]);

      await dns.setA("app.test", ["127.0.0.2", "127.0.0.3"]);
      await sleep(1100);
      assert.deepEqual(new Set(await ask(4)), new Set(["two", "three"]));

      // a name without records: the static upstreams answer
      assert.deepEqual(await names(`${srv.url()}/missing`, 2), ["static", "static"]);
      await srv.waitLog((l) =>
        l.msg === "failed getting dynamic upstreams; falling back to static upstreams"
      );
    } finally {
      await srv.stop();
      await Promise.all([two.close(), three.close(), fallback.close()]);
      await dns.stop();
    }
  },
});

Deno.test("dynamic upstreams srv: records in priority order, refresh, grace period, fallback; multi", async () => {
  const dns = await startSrvServer();
  const [p1, p2, p3] = [freePort(), freePort(), freePort()];
  const b1 = backend("one", "127.0.0.1", p1);
  const b2 = backend("two", "127.0.0.1", p2);
  const b3 = backend("three", "127.0.0.1", p3);
  dns.records.set("_api._tcp.svc.test", [
    { priority: 20, weight: 1, port: p2, target: "localhost." },
    { priority: 10, weight: 1, port: p1, target: "localhost." },
  ]);
  dns.records.set("plain.test", [{ priority: 1, weight: 1, port: p3, target: "localhost." }]);
  const resolver = { addresses: [`udp/127.0.0.1:${dns.dnsPort}`] };
  const srv = await serve([{
    match: [{ path: ["/grace"] }],
    handle: [{
      handler: "reverse_proxy",
      dynamic_upstreams: {
        source: "srv",
        name: "plain.test",
        refresh: "300ms",
        grace_period: "5s",
        resolver,
      },
    }],
  }, {
    match: [{ path: ["/multi"] }],
    handle: [{
      handler: "reverse_proxy",
      dynamic_upstreams: {
        source: "multi",
        sources: [
          { source: "srv", service: "api", proto: "tcp", name: "svc.test", resolver },
          { source: "srv", name: "plain.test", resolver },
          { source: "srv", name: "nothing.test", resolver },
        ],
      },
      load_balancing: { selection_policy: { policy: "round_robin" } },
    }],
  }, {
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: `127.0.0.1:${p3}` }],
      dynamic_upstreams: {
        source: "srv",
        service: "api",
        proto: "tcp",
        name: "svc.test",
        refresh: "300ms",
        resolver,
      },
      // the first record (priority 10) is chosen while it is available
      load_balancing: { selection_policy: { policy: "first" } },
    }],
  }]);
  try {
    assert.deepEqual(await names(srv.url(), 2), ["one", "one"]);
    dns.records.set("_api._tcp.svc.test", [
      { priority: 5, weight: 1, port: p2, target: "localhost." },
      { priority: 10, weight: 1, port: p1, target: "localhost." },
    ]);
    await sleep(400);
    assert.deepEqual(await names(srv.url(), 2), ["two", "two"]);

    // lookups failing: the static upstream answers
    dns.records.delete("_api._tcp.svc.test");
    await sleep(400);
    assert.deepEqual(await names(srv.url(), 2), ["three", "three"]);

    // with a grace period, the last answer keeps serving while lookups fail
    assert.equal(await (await fetch(`${srv.url()}/grace`)).text(), "three");
    dns.records.delete("plain.test");
    await sleep(400);
    const before = dns.queries;
    assert.deepEqual(await names(`${srv.url()}/grace`, 3), ["three", "three", "three"]);
    assert.equal(dns.queries - before, 1, "looked up once, then the grace period holds");
    await srv.waitLog((l) => l.msg === "SRV lookup failed; using previously cached");

    // multi: every source's upstreams (the failing one skipped)
    dns.records.set("_api._tcp.svc.test", [{
      priority: 1,
      weight: 1,
      port: p1,
      target: "localhost.",
    }]);
    dns.records.set("plain.test", [{ priority: 1, weight: 1, port: p2, target: "localhost." }]);
    assert.deepEqual(new Set(await names(`${srv.url()}/multi`, 4)), new Set(["one", "two"]));
    await srv.waitLog((l) => l.msg === "upstream source returned error");
  } finally {
    await srv.stop();
    await Promise.all([b1.close(), b2.close(), b3.close()]);
    await dns.stop();
  }
});

Deno.test("dynamic upstreams: config errors name the field", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ source: "a" }, /"name" is required/],
    [{ source: "dns", name: "x" }, /unknown upstream source "dns"/],
    [{ source: "a", name: "x", bogus: 1 }, /unknown field "bogus"/],
    [{ source: "srv", name: "x", dial_network: "udp" }, /dial_network/],
    [{ source: "a", name: "x", resolver: { addresses: ["tcp/1.1.1.1"] } }, /network tcp/],
  ];
  for (const [dyn, re] of cases) {
    await assert.rejects(
      serve([{ handle: [{ handler: "reverse_proxy", dynamic_upstreams: dyn }] }]),
      re,
      JSON.stringify(dyn),
    );
  }
});
