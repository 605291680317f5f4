/**
 * The cache under load, with the server and the origin as their own processes: 1,000
 * simultaneous misses of one key make one upstream request and the other 999 wait for its
 * answer (coalescing, as Souin's singleflight in pkg/middleware/middleware.go Upstream; each
 * marked `collapsed`, RFC 9211 §2.5), so do simultaneous revalidations, answers that cannot
 * be stored are never shared, and two rounds of 50,000 distinct keys keep the memory storage
 * within its bounds (its own accounting, read through the admin API) and the server's
 * resident set level (the second round grows it by at most a quarter of what the first round
 * grew it by). The origin
 * holds the leader's answer until every request is at the cache: the server's
 * `caddy_http_requests_in_flight` for the route says how many are.
 *
 * 50,000 keys a round, not the 100,000 of the memory figures in bench/http/README.md ("cache
 * and rate_limit", `KEYS=100000 ROUNDS=2 deno run -A bench/http/cache_memory.ts`): every key
 * is a miss through the proxy to the origin, and two rounds of 100,000 took 45 s on two
 * cores at a load average of 3–4, too long for a test on a busier machine.
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

/**
 * Sends requests of at least `keys` distinct keys (`<prefix><1..>`, 1 KiB answers fresh for
 * 10 minutes) with wrk (64 connections, a Lua counter), so that the client costs the shared
 * cores little; wrk exits once `keys` answers came, saying how many were not 200.
 */
async function distinctKeys(base: string, prefix: string, keys: number, dir: string) {
  const script = `${dir}/keys-${prefix.replaceAll("/", "_")}.lua`;
  await Deno.writeTextFile(
    script,
    `local n, got, bad = 0, 0, 0
local started = os.time()
request = function()
  n = n + 1
  return wrk.format("GET", "${prefix}" .. n .. "?cc=max-age%3D600&size=1024")
end
response = function(status, headers, body)
  got = got + 1
  if status ~= 200 then bad = bad + 1 end
  if got == ${keys} then
    io.write(string.format("answers %d not-200 %d sent %d seconds %d\\n", got, bad, n,
      os.time() - started))
    io.flush()
    os.exit(0)
  end
end
`,
  );
  const out = await new Deno.Command("wrk", {
    args: ["-t1", "-c64", "-d600s", "-s", script, base],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  const m = /answers (\d+) not-200 (\d+) sent (\d+) seconds (\d+)/.exec(text);
  assert.ok(m, `wrk stopped before ${keys} answers: ${text}`);
  assert.equal(Number(m[2]), 0, text);
  return { sent: Number(m[3]), seconds: Number(m[4]) };
}

/**
 * How much the second round may grow the resident set, as a fraction of what the first round
 * grew it by (a leak of what the storage let go would grow it as much as the first round did).
 */
const RSS_MARGIN = 0.25;

Deno.test("cache load: two rounds of 50,000 keys keep the memory storage within its bounds and the resident set level", async () => {
  const origin = await startOrigin();
  const maxBytes = 8 * 1024 * 1024;
  const srv = await startCacheServer(origin, {
    otter: { configuration: { size: 100_000, max_bytes: maxBytes } },
  });
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-cache-keys-" });
  const keys = 50_000;
  const get = async (p: string) => {
    const r = await fetch(`${srv.base}${p}?cc=max-age%3D600&size=1024`);
    await r.arrayBuffer();
    return r.headers.get("cache-status") ?? "";
  };
  try {
    const start = rssKiB(srv.pid);
    const rss: number[] = [];
    for (const round of [0, 1]) {
      const { seconds } = await distinctKeys(srv.base, `/r${round}/k`, keys, dir);
      rss.push(rssKiB(srv.pid));
      const [stats] = await (await fetch(`${srv.admin}/cache/`)).json();
      console.log(
        `round ${round + 1}: ${keys} keys of 1 KiB in ${seconds} s: storage ` +
          `${stats.entries} entries, ${(stats.bytes / 1048576).toFixed(2)} MiB of ` +
          `${(maxBytes / 1048576).toFixed(0)} MiB; server RSS ${(start / 1024).toFixed(1)} → ` +
          `${(rss[round] / 1024).toFixed(1)} MiB`,
      );
      assert.ok(stats.bytes <= maxBytes, `${stats.bytes} bytes`);
      // the bound is what holds them: most of the answers were let go
      assert.ok(stats.entries < keys / 10, `${stats.entries} entries`);
      // the recent keys are there, the first ones are not
      assert.match(await get(`/r${round}/k${keys - 1000}`), /hit/);
      assert.match(await get(`/r${round}/k1`), /fwd=uri-miss/);
    }
    // the second round's keys pushed out the first's
    assert.match(await get(`/r0/k${keys - 1000}`), /fwd=uri-miss/);
    // the memory the first round took is reused: the second grows the process by little
    const first = rss[0] - start;
    assert.ok(
      rss[1] - rss[0] <= first * RSS_MARGIN,
      `RSS ${(start / 1024).toFixed(1)} MiB at the start, ${(rss[0] / 1024).toFixed(1)} after ` +
        `the first round, ${(rss[1] / 1024).toFixed(1)} after the second (more than ` +
        `${RSS_MARGIN * 100}% of the first round's growth)`,
    );
  } finally {
    await srv.stop();
    await origin.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
