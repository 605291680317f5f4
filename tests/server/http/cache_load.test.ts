/**
 * The cache under load, with the server and the origin as their own processes: 1,000
 * simultaneous misses of one key make one upstream request and the other 999 wait for its
 * answer (coalescing, as Souin's singleflight in pkg/middleware/middleware.go Upstream; each
 * marked `collapsed`, RFC 9211 §2.5), so do simultaneous revalidations, answers that cannot
 * be stored are never shared, and 100,000 keys keep the memory storage within its bounds
 * (its own accounting, read through the admin API; the resident set is printed, not
 * asserted). The origin holds the leader's answer until every request is at the cache:
 * the server's `caddy_http_requests_in_flight` for the route says how many are.
 */
import assert from "node:assert/strict";
import { freePort, spawnCli, tempEnv, until } from "../fixtures/helpers.ts";
import { type Origin, startOrigin } from "../fixtures/origin_process.ts";

// deno-lint-ignore no-explicit-any
type J = Record<string, any>;

interface Server {
  base: string;
  admin: string;
  pid: number;
  stop(): Promise<void>;
}

async function startCacheServer(origin: Origin, cache: J): Promise<Server> {
  const { dir, env } = await tempEnv();
  const port = freePort();
  const adminPort = freePort();
  await Deno.writeTextFile(
    `${dir}/config.json`,
    JSON.stringify({
      admin: { listen: `127.0.0.1:${adminPort}` },
      logging: { logs: { default: { level: "ERROR" } } },
      apps: {
        http: {
          servers: {
            srv0: {
              listen: [`127.0.0.1:${port}`],
              automatic_https: { disable: true },
              // the route's requests in flight: how many are at the cache
              metrics: {},
              routes: [{
                handle: [
                  { handler: "cache", ...cache },
                  { handler: "reverse_proxy", upstreams: [{ dial: origin.dial }] },
                ],
              }],
            },
          },
        },
      },
    }),
  );
  // one process: the counts below are one cache's (with workers, each has its own, and the
  // admin API's figures are their sum), whatever GATEHOUSE_WORKERS the tests run with
  const proc = spawnCli(["run", "--config", `${dir}/config.json`], {
    ...env,
    GATEHOUSE_WORKERS: "1",
  });
  const admin = `http://127.0.0.1:${adminPort}`;
  await until(() => fetch(`${admin}/cache/`).then((r) => r.ok), 30_000, "cache server up");
  return {
    base: `http://127.0.0.1:${port}`,
    admin,
    pid: proc.child.pid,
    async stop() {
      proc.child.kill("SIGTERM");
      await proc.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** The requests in the cache's route now (`caddy_http_requests_in_flight`, admin `/metrics`). */
async function atCache(admin: string): Promise<number> {
  const text = await (await fetch(`${admin}/metrics`)).text();
  const m = /^caddy_http_requests_in_flight\{server="srv0",handler="cache"\} (\d+)$/m.exec(text);
  return Number(m?.[1] ?? 0);
}

/**
 * Sends `n` requests of `url` at once whose upstream request the origin holds (`X-Hold`)
 * until all `n` are in the cache's route (a request is in the route from its first handler,
 * the cache, which either sends it upstream or has it wait for the one on its way before it
 * yields), then lets the origin answer.
 */
async function heldBurst(srv: Server, origin: Origin, url: string, n: number, name: string) {
  const answers = burst(url, n, { "x-hold": name });
  await until(async () => (await atCache(srv.admin)) === n, 120_000, `${n} requests at the cache`);
  await origin.release(name);
  return await answers;
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
  return Number(m?.[1] ?? 0);
}

async function burst(url: string, n: number, headers: Record<string, string> = {}) {
  return await Promise.all(
    Array.from({ length: n }, async () => {
      const r = await fetch(url, { headers });
      return { status: r.status, cs: r.headers.get("cache-status") ?? "", body: await r.text() };
    }),
  );
}

Deno.test("cache load: 1,000 simultaneous misses of one key make exactly one upstream request, the other 999 collapsed into it", async () => {
  const origin = await startOrigin();
  const srv = await startCacheServer(origin, {});
  try {
    const path = "/coalesced?cc=max-age%3D60";
    const got = await heldBurst(srv, origin, srv.base + path, 1000, "miss");
    assert.equal(await origin.count(path), 1);
    assert.ok(got.every((g) => g.status === 200 && g.body === got[0].body), "one answer for all");
    const stored = got.filter((g) => /^Gatehouse; fwd=uri-miss; stored; /.test(g.cs));
    const collapsed = got.filter((g) =>
      /^Gatehouse; fwd=uri-miss; ttl=\d+; collapsed(;|$)/.test(g.cs)
    );
    const hits = got.filter((g) => /; hit;/.test(g.cs));
    assert.equal(stored.length, 1, "one leader went upstream and stored it");
    assert.equal(collapsed.length, 999, "every other request waited for it");
    assert.equal(hits.length, 0, "none came after it was stored");
    // a stale answer revalidated by many at once: one upstream request too
    const stale = "/coalesced-stale?cc=max-age%3D60&age=61&etag=%22e%22";
    await fetch(srv.base + stale).then((r) => r.text());
    const again = await heldBurst(srv, origin, srv.base + stale, 500, "stale");
    assert.equal(await origin.count(stale), 2);
    assert.ok(again.every((g) => g.status === 200 && /^n=1 /.test(g.body)));
    assert.equal(again.filter((g) => /fwd=stale; fwd-status=304/.test(g.cs)).length, 1);
    assert.equal(
      again.filter((g) => /^Gatehouse; fwd=stale; ttl=\d+; collapsed(;|$)/.test(g.cs)).length,
      499,
    );
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("cache load: an answer that cannot be stored is not shared with the requests that waited", async () => {
  const origin = await startOrigin();
  const srv = await startCacheServer(origin, {});
  try {
    const path = "/private?cc=private&delay=300";
    const got = await burst(srv.base + path, 50);
    // each client got its own answer (n=1 ... n=50)
    assert.equal(new Set(got.map((g) => g.body)).size, 50);
    assert.equal(await origin.count(path), 50);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("cache load: with disable_coalescing every miss goes upstream", async () => {
  const origin = await startOrigin();
  const srv = await startCacheServer(origin, { disable_coalescing: true });
  try {
    const path = "/uncoalesced?cc=max-age%3D60&delay=300";
    await burst(srv.base + path, 20);
    assert.equal(await origin.count(path), 20);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("cache load: 100,000 keys keep the memory storage within its bounds", async () => {
  const origin = await startOrigin();
  const maxBytes = 8 * 1024 * 1024;
  const srv = await startCacheServer(origin, {
    otter: { configuration: { size: 100_000, max_bytes: maxBytes } },
  });
  try {
    const before = rssKiB(srv.pid);
    const keys = 100_000;
    let next = 0;
    let peak = 0;
    const worker = async () => {
      while (next < keys) {
        const i = next++;
        const r = await fetch(`${srv.base}/k${i}?cc=max-age%3D600&size=1024`);
        await r.arrayBuffer();
        if (i % 10_000 === 0) peak = Math.max(peak, rssKiB(srv.pid));
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 64 }, worker));
    const seconds = (performance.now() - t0) / 1000;
    const after = rssKiB(srv.pid);
    peak = Math.max(peak, after);
    const [stats] = await (await fetch(`${srv.admin}/cache/`)).json();
    console.log(
      `100,000 keys of 1 KiB in ${seconds.toFixed(1)} s: storage ${stats.entries} entries, ` +
        `${(stats.bytes / 1048576).toFixed(2)} MiB of ${(maxBytes / 1048576).toFixed(0)} MiB; ` +
        `server RSS ${(before / 1024).toFixed(1)} → ${(after / 1024).toFixed(1)} MiB ` +
        `(peak sampled ${(peak / 1024).toFixed(1)} MiB)`,
    );
    assert.ok(stats.bytes <= maxBytes, `${stats.bytes} bytes`);
    assert.ok(stats.entries <= 100_000);
    // the bound is what holds them: most of the 100,000 answers were let go
    assert.ok(stats.entries < keys / 10, `${stats.entries} entries`);
    // the most recent keys are there, the first ones are not
    const last = await fetch(`${srv.base}/k${keys - 1}?cc=max-age%3D600&size=1024`);
    await last.arrayBuffer();
    assert.match(last.headers.get("cache-status") ?? "", /hit/);
    const first = await fetch(`${srv.base}/k0?cc=max-age%3D600&size=1024`);
    await first.arrayBuffer();
    assert.match(first.headers.get("cache-status") ?? "", /fwd=uri-miss/);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});
