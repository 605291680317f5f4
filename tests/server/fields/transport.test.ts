/**
 * The `http` transport's connection fields against real upstreams on loopback: `keep_alive`
 * (enabled, max_idle_conns_per_host, max_idle_conns, idle_timeout, probe_interval),
 * `max_conns_per_host`, `max_response_header_size`, `read_buffer_size`, `resolver`,
 * `dial_fallback_delay` (live, and its timing with injected waits) and `tls.except_ports`.
 * Each upstream answers with the peer port it saw, so connection reuse is visible.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { makePki } from "../http/pki.ts";
import { readKeepAlive } from "../../../lib/server/listeners/keepalive.ts";
import {
  dialParallel,
  type ResolvedAddress,
} from "../../../lib/server/http/handlers/reverse_proxy/dial.ts";
import { startDns } from "./_dns.ts";

let inFlight = 0;
let maxInFlight = 0;
function upstream(hostname = "127.0.0.1", port = 0) {
  return Deno.serve({ hostname, port, onListen() {} }, async (req, info) => {
    const url = new URL(req.url);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      if (url.pathname === "/slow") await new Promise((r) => setTimeout(r, 300));
      if (url.pathname === "/bighead") {
        return new Response("x", {
          headers: { "x-big": "h".repeat(Number(url.searchParams.get("n"))) },
        });
      }
      if (url.pathname === "/stream") {
        const big = new Uint8Array(200_000).fill(97);
        return new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(big);
              c.close();
            },
          }),
        );
      }
      return new Response(`${hostname} ${info.remoteAddr.port}`);
    } finally {
      inFlight--;
    }
  });
}
const addr = (s: Deno.HttpServer) => (s.addr as Deno.NetAddr);
const up = upstream();
const up2 = upstream();
const dialOf = (s: Deno.HttpServer) => `127.0.0.1:${addr(s).port}`;

function proxy(transport: Record<string, unknown>, upstreams = [{ dial: dialOf(up) }], extra = {}) {
  return {
    handle: [{
      handler: "reverse_proxy",
      upstreams,
      transport: { protocol: "http", ...transport },
      ...extra,
    }],
  };
}

async function ports(url: string, n: number, concurrent = false, path = "/"): Promise<string[]> {
  const get = async () => (await (await fetch(url + path)).text()).split(" ")[1];
  if (concurrent) return await Promise.all(Array.from({ length: n }, get));
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(await get());
  return out;
}

Deno.test("transport: keep_alive enabled, max_idle_conns_per_host, idle_timeout, max_idle_conns", async () => {
  const srv = await startHttp({
    servers: {
      reuse: { listen: ["127.0.0.1:0"], routes: [proxy({})] },
      off: { listen: ["127.0.0.1:0"], routes: [proxy({ keep_alive: { enabled: false } })] },
      one: {
        listen: ["127.0.0.1:0"],
        routes: [proxy({ keep_alive: { max_idle_conns_per_host: 1 } })],
      },
      short: {
        listen: ["127.0.0.1:0"],
        routes: [proxy({ keep_alive: { idle_timeout: "200ms" } })],
      },
      used: {
        listen: ["127.0.0.1:0"],
        routes: [proxy({ keep_alive: { idle_timeout: "1s" } })],
      },
      total: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(
          { keep_alive: { max_idle_conns: 1 } },
          [{ dial: dialOf(up) }, { dial: dialOf(up2) }],
          { load_balancing: { selection_policy: { policy: "round_robin" } } },
        )],
      },
    },
  });
  try {
    const reused = await ports(srv.url("reuse"), 3);
    assert.equal(new Set(reused).size, 1, "by default one connection serves them all");
    const off = await ports(srv.url("off"), 3);
    assert.equal(new Set(off).size, 3, "keep_alive.enabled false: a connection per request");

    const first = await ports(srv.url("one"), 3, true, "/slow");
    assert.equal(new Set(first).size, 3);
    const second = await ports(srv.url("one"), 3, true, "/slow");
    assert.equal(second.filter((p) => first.includes(p)).length, 1, "one idle connection was kept");

    const [a] = await ports(srv.url("short"), 1);
    assert.equal((await ports(srv.url("short"), 1))[0], a, "reused within the idle timeout");
    await new Promise((r) => setTimeout(r, 500));
    assert.notEqual((await ports(srv.url("short"), 1))[0], a, "closed after the idle timeout");

    // the timeout counts from each return to the pool: a connection used every 100 ms lives on
    // past its first idle deadline (the pool's one timer must not close it on a stale one)
    const [u] = await ports(srv.url("used"), 1);
    const started = performance.now();
    while (performance.now() - started < 1500) {
      await new Promise((r) => setTimeout(r, 100));
      assert.equal((await ports(srv.url("used"), 1))[0], u, "kept while in use");
    }

    // round robin: up, up2, up; one idle connection over both upstreams
    const [p1, , p3] = await ports(srv.url("total"), 3);
    assert.notEqual(p3, p1, "the first upstream's idle connection gave way to the second's");
  } finally {
    await srv.stop();
  }
});

Deno.test("transport: max_conns_per_host makes requests wait for a connection", async () => {
  const srv = await startHttp({
    servers: {
      capped: { listen: ["127.0.0.1:0"], routes: [proxy({ max_conns_per_host: 2 })] },
      free: { listen: ["127.0.0.1:0"], routes: [proxy({})] },
    },
  });
  try {
    maxInFlight = 0;
    const capped = await ports(srv.url("capped"), 6, true, "/slow");
    assert.equal(capped.length, 6);
    assert.equal(maxInFlight, 2, "at most two at once upstream");
    assert.equal(new Set(capped).size, 2, "over two connections");
    maxInFlight = 0;
    await ports(srv.url("free"), 6, true, "/slow");
    assert.equal(maxInFlight, 6);
  } finally {
    await srv.stop();
  }
});

Deno.test("transport: max_response_header_size and read_buffer_size", async () => {
  const srv = await startHttp({
    servers: {
      small: { listen: ["127.0.0.1:0"], routes: [proxy({ max_response_header_size: 1024 })] },
      reads: { listen: ["127.0.0.1:0"], routes: [proxy({ read_buffer_size: 1000 })] },
      plain: { listen: ["127.0.0.1:0"], routes: [proxy({})] },
    },
  });
  try {
    assert.equal((await fetch(`${srv.url("small")}/bighead?n=2000`)).status, 502);
    const ok = await fetch(`${srv.url("small")}/bighead?n=500`);
    assert.equal(ok.status, 200);
    await ok.text();
    assert.equal((await fetch(`${srv.url("plain")}/bighead?n=2000`)).status, 200);

    // a streamed body goes on in the pieces the proxy read: at most read_buffer_size bytes
    const sizes = async (name: string) => {
      const r = await fetch(`${srv.url(name)}/stream`);
      const out: number[] = [];
      for await (const chunk of r.body!) out.push(chunk.length);
      return out;
    };
    const small = await sizes("reads");
    assert.equal(small.reduce((a, b) => a + b, 0), 200_000);
    assert.ok(Math.max(...small) <= 1000, `largest piece ${Math.max(...small)}`);
    assert.ok(Math.max(...(await sizes("plain"))) > 1000);
  } finally {
    await srv.stop();
  }
});

Deno.test("transport: resolver and dial_fallback_delay resolve and race a name's addresses", async () => {
  const port = addr(up).port;
  const v6 = upstream("::1", 0);
  const v6port = addr(v6).port;
  const dns = await startDns({
    "up.test": { a: ["127.0.0.1"] },
    // the v4 address has nothing on the port; the v6 one has
    "dual.test": { a: ["127.0.0.1"], aaaa: ["::1"] },
  });
  const resolver = { addresses: [`127.0.0.1:${dns.port}`] };
  const srv = await startHttp({
    servers: {
      resolved: {
        listen: ["127.0.0.1:0"],
        routes: [proxy({ resolver }, [{ dial: `up.test:${port}` }])],
      },
      system: { listen: ["127.0.0.1:0"], routes: [proxy({}, [{ dial: `up.test:${port}` }])] },
      dual: {
        listen: ["127.0.0.1:0"],
        routes: [proxy({ resolver, dial_fallback_delay: "5s" }, [{ dial: `dual.test:${v6port}` }])],
      },
    },
  });
  try {
    assert.match(await (await fetch(srv.url("resolved"))).text(), /^127\.0\.0\.1 \d+$/);
    assert.ok(dns.asked.includes("up.test A"));
    assert.equal(
      (await fetch(srv.url("system"))).status,
      502,
      "the system resolver has no up.test",
    );
    // the v4 attempt is refused: the v6 one starts at once, not after the 5s delay
    assert.match(await (await fetch(srv.url("dual"))).text(), /^::1 \d+$/);
  } finally {
    await srv.stop();
    await dns.close();
    await v6.shutdown();
  }
});

Deno.test("transport: dial_fallback_delay waits before racing the other family (Go's dialParallel)", async () => {
  const v6a: ResolvedAddress = { address: "::1", family: 6 };
  const v6b: ResolvedAddress = { address: "::2", family: 6 };
  const v4: ResolvedAddress = { address: "127.0.0.1", family: 4 };
  const events: string[] = [];
  let fire!: () => void;
  const sleep = (ms: number) => {
    events.push(`sleep ${ms}`);
    return new Promise<void>((r) => (fire = r));
  };
  const pending = new Map<string, { ok: (c: string) => void; no: (e: Error) => void }>();
  const connect = (a: ResolvedAddress) => {
    events.push(`dial ${a.address}`);
    return new Promise<string>((ok, no) => pending.set(a.address, { ok, no }));
  };
  const closed: string[] = [];
  const tick = () => new Promise((r) => setTimeout(r, 0));
  const won = dialParallel([v6a, v6b, v4], 300, connect, sleep, (c) => closed.push(c));
  await tick();
  assert.deepEqual(events, ["dial ::1", "sleep 300"], "the fallback waits for the delay");
  fire();
  await tick();
  assert.deepEqual(events, ["dial ::1", "sleep 300", "dial 127.0.0.1"]);
  pending.get("127.0.0.1")!.ok("v4-conn");
  assert.equal(await won, "v4-conn");
  pending.get("::1")!.ok("late-v6");
  await tick();
  assert.deepEqual(closed, ["late-v6"], "the loser is closed");

  // negative: one address at a time, never in parallel
  events.length = 0;
  const serial = dialParallel([v6a, v4], -1, connect, sleep, () => {});
  await tick();
  assert.deepEqual(events, ["dial ::1"]);
  pending.get("::1")!.no(new Error("refused"));
  await tick();
  assert.deepEqual(events, ["dial ::1", "dial 127.0.0.1"]);
  pending.get("127.0.0.1")!.ok("c");
  assert.equal(await serial, "c");
});

Deno.test("transport: keep_alive.probe_interval sets TCP keep-alive on upstream connections", async () => {
  const srv = await startHttp({
    servers: {
      probe: { listen: ["127.0.0.1:0"], routes: [proxy({ keep_alive: { probe_interval: "7s" } })] },
      plain: { listen: ["127.0.0.1:0"], routes: [proxy({})] },
    },
  });
  try {
    const [local] = await ports(srv.url("probe"), 1);
    assert.deepEqual(readKeepAlive(Number(local), addr(up).port), {
      enabled: true,
      idleS: 7,
      intervalS: 7,
      count: readKeepAlive(Number(local), addr(up).port)!.count,
    });
    const [other] = await ports(srv.url("plain"), 1);
    assert.equal(readKeepAlive(Number(other), addr(up).port)?.enabled, false);
  } finally {
    await srv.stop();
  }
});

Deno.test("transport: tls.except_ports dials those ports without TLS", async () => {
  const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
  const secure = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      cert: pki.leafs.up.cert,
      key: pki.leafs.up.key,
      onListen() {},
    },
    () => new Response("tls"),
  );
  const ca = {
    provider: "inline",
    trusted_ca_certs: [pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "")],
  };
  const plainPort = addr(up).port;
  const both = [{ dial: dialOf(secure) }, { dial: `127.0.0.1:${plainPort}` }];
  const rr = { load_balancing: { selection_policy: { policy: "round_robin" } } };
  const srv = await startHttp({
    servers: {
      except: {
        listen: ["127.0.0.1:0"],
        routes: [
          proxy(
            { tls: { ca, except_ports: [String(plainPort)], renegotiation: "never" } },
            both,
            rr,
          ),
        ],
      },
      all_tls: { listen: ["127.0.0.1:0"], routes: [proxy({ tls: { ca } }, both, rr)] },
    },
  });
  try {
    const bodies = [];
    for (let i = 0; i < 2; i++) bodies.push(await (await fetch(srv.url("except"))).text());
    assert.deepEqual(bodies.map((b) => b.split(" ")[0]).sort(), ["127.0.0.1", "tls"]);
    const statuses = [];
    for (let i = 0; i < 2; i++) {
      const r = await fetch(srv.url("all_tls"));
      statuses.push(r.status);
      await r.body?.cancel();
    }
    assert.deepEqual(statuses.sort(), [200, 502], "without except_ports the plain port fails TLS");
  } finally {
    await srv.stop();
    await secure.shutdown();
  }
});

Deno.test({
  name: "transport: stop the upstreams",
  fn: async () => {
    await up.shutdown();
    await up2.shutdown();
  },
});
