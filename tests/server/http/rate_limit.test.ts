/**
 * `http.handlers.rate_limit` against a real origin process: the behaviour of
 * github.com/mholt/caddy-ratelimit (README.md, handler.go, ratelimit.go, ringbuffer.go),
 * each case naming the part of the plugin it follows.
 */
import assert from "node:assert/strict";
import { serve, startHttp } from "./harness.ts";
import { startOrigin } from "../fixtures/origin_process.ts";
import { RingLimiter } from "../../../lib/server/http/handlers/rate_limit/ring.ts";
import { networkKey } from "../../../lib/server/http/handlers/rate_limit/prefix.ts";
import { decodeRateLimit } from "../../../lib/server/http/handlers/rate_limit/config.ts";
import fc from "fast-check";

// deno-lint-ignore no-explicit-any
type J = Record<string, any>;

const proxy = (dial: string) => ({ handler: "reverse_proxy", upstreams: [{ dial }] });
const limit = (zones: J, extra: J = {}) => ({
  handler: "rate_limit",
  rate_limits: zones,
  ...extra,
});

async function get(url: string, headers: Record<string, string> = {}) {
  const r = await fetch(url, { headers });
  return { status: r.status, headers: r.headers, body: await r.text() };
}

Deno.test("rate_limit ring: the plugin's sliding window (ringbuffer.go When/reserve/Count)", () => {
  // 2 events per 1000 ms; times are given, so the window is exact
  const r = new RingLimiter(2, 1000);
  assert.equal(r.when(0), 0);
  assert.equal(r.when(400), 0);
  // full: the wait is oldest + window - now
  assert.equal(r.when(500), 500);
  // the window slides: at 1001 only the event of 0 has left it (a fixed window would allow 2)
  assert.equal(r.when(1001), 0);
  assert.equal(r.when(1002), 398);
  assert.deepEqual(r.count(1002), [2, 400]);
  // 1400 - 400 = 1000 is not more than the window (now.Sub(oldest) > window): nothing is
  // counted, and the wait is 0, which the plugin's handler lets through (dur > 0 refuses)
  assert.equal(r.when(1400), 0);
  assert.deepEqual(r.count(1400), [2, 400]);
  assert.equal(r.when(1401), 0);
  assert.deepEqual(r.count(1401), [2, 1001]);
  assert.deepEqual(r.count(5000), [0, 0]);
  // SetMaxEvents: a lower limit forgets the oldest events, a higher one has room at once
  const s = new RingLimiter(3, 1000);
  for (const t of [0, 10, 20]) assert.equal(s.when(t), 0);
  s.setMaxEvents(1);
  assert.deepEqual(s.count(30), [1, 20]);
  assert.equal(s.when(30), 990);
  s.setMaxEvents(4);
  assert.equal(s.when(31), 0);
  assert.deepEqual(s.count(31), [2, 20]);
});

/**
 * The plugin's ring as ringbuffer.go describes it, for comparison: a ring of `max` times
 * (zero: a free slot), the cursor at the oldest; When allows when `now - ring[cursor] >
 * window` and then writes `now` there, else answers `ring[cursor] + window - now`.
 */
class PluginRing {
  ring: number[];
  cursor = 0;
  constructor(max: number, public window: number) {
    this.ring = new Array(max).fill(0);
  }
  when(now: number): number {
    if (now - this.ring[this.cursor] > this.window) {
      this.ring[this.cursor] = now;
      this.cursor = (this.cursor + 1) % this.ring.length;
      return 0;
    }
    return this.ring[this.cursor] + this.window - now;
  }
}

Deno.test("rate_limit ring: the same decisions and waits as the plugin's ring for any events (fuzz)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 200 }),
      fc.array(fc.integer({ min: 0, max: 120 }), { maxLength: 200 }),
      (max, window, gaps) => {
        const ours = new RingLimiter(max, window);
        const theirs = new PluginRing(max, window);
        let now = 1_000_000;
        for (const g of gaps) {
          now += g;
          assert.equal(ours.when(now), theirs.when(now), `at ${now}`);
        }
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("rate_limit prefix: keys grouped by network (handler.go applyNetworkPrefix)", () => {
  assert.equal(networkKey("203.0.113.77", 24, 0), "203.0.113.0/24");
  assert.equal(networkKey("203.0.113.77", 0, 64), "203.0.113.77");
  assert.equal(networkKey("2001:db8:1:2:3:4:5:6", 0, 64), "2001:db8:1:2::/64");
  assert.equal(networkKey("2001:db8::1", 0, 48), "2001:db8::/48");
  assert.equal(networkKey("2001:db8::1", 24, 0), "2001:db8::1");
  assert.equal(networkKey("::ffff:10.1.2.3", 16, 64), "10.1.0.0/16");
  assert.equal(networkKey("10.1.2.3", 32, 0), "10.1.2.3/32");
  assert.equal(networkKey("not an ip", 24, 64), "not an ip");
});

Deno.test("rate_limit config: refusals name the field (ratelimit.go provision checks)", () => {
  const bad: [J, RegExp][] = [
    [{ rate_limits: { z: { max_events: 1 } } }, /rate_limits\.z: window must be greater than zero/],
    [{ rate_limits: { z: { window: "0s", max_events: 1 } } }, /window must be greater than zero/],
    [{ rate_limits: { z: { window: "1s" } } }, /max_events: must be a whole number of at least 1/],
    [{ rate_limits: { z: { window: "1s", max_events: 2.5 } } }, /max_events/],
    [{ rate_limits: { z: { window: "1s", max_events: 1e8 } } }, /must be at most 10,000,000/],
    [{ rate_limits: { z: { window: "1s", max_events: 1, ipv4_prefix: 33 } } }, /between 0 and 32/],
    [{ rate_limits: { z: { window: "1s", max_events: 1, ipv6_prefix: -1 } } }, /between 0 and 128/],
    [{ rate_limits: { z: { window: "1s", max_events: 1, bogus: 1 } } }, /unknown field "bogus"/],
    [{ jitter: -0.1 }, /jitter must be at least zero/],
    [{ sweep_interval: "1ms" }, /sweep_interval: must be at least 10ms/],
    [{ distributed: { read_interval: "x" } }, /distributed\.read_interval: invalid duration/],
    [{ distributed: { every: "1s" } }, /unknown field "every"/],
    [{ storage: { module: "file_system" } }, /storage: is where distributed counts are shared/],
    [{ storage: { root: "/x" }, distributed: {} }, /needs a "module"/],
    [{ bogus: true }, /unknown field "bogus"/],
  ];
  for (const [cfg, re] of bad) {
    assert.throws(
      () => decodeRateLimit({ handler: "rate_limit", ...cfg }),
      re,
      JSON.stringify(cfg),
    );
  }
});

Deno.test("rate_limit: 429 with Retry-After once a key has its events; refused requests never reach the origin", async () => {
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      limit({ per_user: { key: "{http.request.header.X-User}", window: "1m", max_events: 2 } }),
      proxy(origin.dial),
    ],
  }]);
  try {
    const alice = { "X-User": "alice" };
    assert.equal((await get(`${srv.url()}/a`, alice)).status, 200);
    assert.equal((await get(`${srv.url()}/a`, alice)).status, 200);
    const refused = await get(`${srv.url()}/a`, alice);
    assert.equal(refused.status, 429);
    // the wait to the oldest event leaving a 1m window, rounded as FormatFloat(s+0.5, 'f', 0)
    const retry = Number(refused.headers.get("retry-after"));
    assert.ok(retry >= 59 && retry <= 60, `Retry-After ${retry}`);
    assert.equal(await origin.count("/a"), 2);
    // another key has its own limiter (README: keys with placeholders make one per value)
    assert.equal((await get(`${srv.url()}/a`, { "X-User": "bob" })).status, 200);
    assert.equal(await origin.count("/a"), 3);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: a zone keyed by {remote_host} limits each client address (README's dynamic_example; Caddy's {http.request.remote.host} is the connection's address)", async () => {
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      // the Caddyfile's {remote_host} adapts to this (gatehousefile/rate_limit.test.ts)
      limit({ per_ip: { key: "{http.request.remote.host}", window: "1m", max_events: 2 } }),
      proxy(origin.dial),
    ],
  }]);
  // two loopback source addresses: 127.0.0.1 and 127.0.0.2 are the same machine's
  const from = (localAddress: string) => Deno.createHttpClient({ localAddress });
  const one = from("127.0.0.1");
  const two = from("127.0.0.2");
  const status = async (client: Deno.HttpClient, headers: Record<string, string> = {}) => {
    const r = await fetch(`${srv.url()}/ip`, { client, headers });
    await r.body?.cancel();
    return r.status;
  };
  try {
    assert.equal(await status(one), 200);
    assert.equal(await status(one), 200);
    assert.equal(await status(one), 429);
    // a forwarded address is not the connection's: the same key, still refused
    assert.equal(await status(one, { "X-Forwarded-For": "203.0.113.9" }), 429);
    assert.equal(await origin.count("/ip"), 2);
    // the other address has its own limiter
    assert.equal(await status(two), 200);
    assert.equal(await status(two), 200);
    assert.equal(await status(two), 429);
    assert.equal(await origin.count("/ip"), 4);
  } finally {
    one.close();
    two.close();
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: a zone counts only the requests its matchers match (README: zones filter with matchers)", async () => {
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      limit({
        posts: { match: [{ method: ["POST"] }], key: "static", window: "1m", max_events: 1 },
      }),
      proxy(origin.dial),
    ],
  }]);
  try {
    for (let i = 0; i < 5; i++) assert.equal((await get(`${srv.url()}/m`)).status, 200);
    const post = () =>
      fetch(`${srv.url()}/m`, { method: "POST", body: "x" }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      });
    assert.equal(await post(), 200);
    assert.equal(await post(), 429);
    assert.equal((await get(`${srv.url()}/m`)).status, 200);
    // 6 GETs and the first POST; the refused POST never went upstream
    assert.equal(await origin.count("/m"), 7);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: ipv4_prefix puts a network's addresses on one limiter (handler.go applyNetworkPrefix)", async () => {
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      limit({
        net: { key: "{http.request.header.X-IP}", window: "1m", max_events: 2, ipv4_prefix: 24 },
      }),
      proxy(origin.dial),
    ],
  }]);
  try {
    const from = (ip: string) => get(`${srv.url()}/net`, { "X-IP": ip }).then((r) => r.status);
    assert.equal(await from("10.0.0.1"), 200);
    assert.equal(await from("10.0.0.2"), 200);
    assert.equal(await from("10.0.0.3"), 429);
    assert.equal(await from("10.0.1.1"), 200);
    assert.equal(await origin.count("/net"), 3);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: error routes see the 429 and {http.rate_limit.exceeded.name}; Retry-After stays (handler.go rateLimitExceeded)", async () => {
  const origin = await startOrigin();
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [
            limit({
              tight: { key: "k", window: "1m", max_events: 1 },
              loose: { key: "k", window: "1m", max_events: 100 },
            }),
            proxy(origin.dial),
          ],
        }],
        errors: {
          routes: [{
            handle: [{
              handler: "static_response",
              status_code: "{http.error.status_code}",
              body: "slow down ({http.rate_limit.exceeded.name})",
            }],
          }],
        },
      },
    },
  });
  try {
    assert.equal((await get(`${srv.url()}/e`)).status, 200);
    const r = await get(`${srv.url()}/e`);
    assert.equal(r.status, 429);
    assert.equal(r.body, "slow down (tight)");
    assert.ok(Number(r.headers.get("retry-after")) >= 1);
    assert.equal(await origin.count("/e"), 1);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: jitter adds up to that fraction of the wait to Retry-After (handler.go rateLimitExceeded)", async () => {
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      limit({ z: { key: "k", window: "10s", max_events: 1 } }, { jitter: 1 }),
      proxy(origin.dial),
    ],
  }]);
  try {
    assert.equal((await get(`${srv.url()}/j`)).status, 200);
    const seen = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const r = await get(`${srv.url()}/j`);
      assert.equal(r.status, 429);
      const v = Number(r.headers.get("retry-after"));
      // a wait of up to 10 s plus up to 100%
      assert.ok(v >= 1 && v <= 21, `Retry-After ${v}`);
      seen.add(v);
    }
    assert.ok(seen.size > 1, `jitter varies the wait: ${[...seen]}`);
    assert.equal(await origin.count("/j"), 1);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: log_key puts the key in the 'rate limit exceeded' record, which has none by default (handler.go rateLimitExceeded)", async () => {
  const origin = await startOrigin();
  const zone = (name: string) => ({
    [name]: { key: `secret-${name}`, window: "1m", max_events: 1 },
  });
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ path: ["/keyed"] }],
            handle: [limit(zone("keyed"), { log_key: true }), proxy(origin.dial)],
          },
          { match: [{ path: ["/plain"] }], handle: [limit(zone("plain")), proxy(origin.dial)] },
        ],
      },
    },
  });
  try {
    for (const p of ["/keyed", "/keyed", "/plain", "/plain"]) await get(`${srv.url()}${p}`);
    const keyed = await srv.waitLog((r) => r.msg === "rate limit exceeded" && r.zone === "keyed");
    assert.equal(keyed.key, "secret-keyed");
    assert.equal(keyed.logger, "http.handlers.rate_limit");
    assert.equal(keyed.remote_ip, "127.0.0.1");
    const plain = await srv.waitLog((r) => r.msg === "rate limit exceeded" && r.zone === "plain");
    assert.equal("key" in plain, false);
    assert.equal(await origin.count("/keyed"), 1);
    assert.equal(await origin.count("/plain"), 1);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: a zone keeps its counts across a config reload (README: RL state persisted through config reloads)", async () => {
  const origin = await startOrigin();
  // `tag` changes the rest of the config (a header the proxy adds), not the zone
  const routes = (zone: string, events: number, tag = "first") => ({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [
            limit({ [zone]: { key: "k", window: "1m", max_events: events } }),
            { ...proxy(origin.dial), headers: { request: { set: { "X-Config": [tag] } } } },
          ],
        }],
      },
    },
  });
  const srv = await startHttp(routes("kept", 2));
  const status = async () => (await get(`${srv.url()}/r`)).status;
  try {
    assert.equal(await status(), 200);
    assert.equal(await status(), 200);
    assert.equal(await status(), 429);
    assert.equal(await origin.count("/r"), 2);
    await srv.reload(routes("kept", 2, "another"));
    assert.equal(await status(), 429, "unchanged zone: still full");
    assert.equal(await origin.count("/r"), 2);
    // a higher limit keeps the events and has room for one more (SetMaxEvents)
    await srv.reload(routes("kept", 3));
    assert.equal(await status(), 200);
    assert.equal(await status(), 429);
    assert.equal(await origin.count("/r"), 3);
    // a zone of another name starts empty
    await srv.reload(routes("other", 3, "another"));
    assert.equal(await status(), 200);
    assert.equal(await origin.count("/r"), 4);
    assert.equal((await origin.seen("/r"))?.["x-config"], "another", "the new config serves");
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: the window slides: a refused key is let through again once its oldest event left the window, after Retry-After (ringbuffer.go When)", async () => {
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      limit({ short: { key: "{http.request.header.X-User}", window: "1s", max_events: 2 } }),
      proxy(origin.dial),
    ],
  }]);
  const user = { "X-User": "carol" };
  try {
    assert.equal((await get(`${srv.url()}/w`, user)).status, 200);
    assert.equal((await get(`${srv.url()}/w`, user)).status, 200);
    const refused = await get(`${srv.url()}/w`, user);
    assert.equal(refused.status, 429);
    // the wait to the oldest event leaving the window, rounded up past it (wait + 0.5 to whole
    // seconds): after it the key has room again
    const retry = Number(refused.headers.get("retry-after"));
    assert.ok(retry >= 1 && retry <= 2, `Retry-After ${retry}`);
    assert.equal(await origin.count("/w"), 2);
    await new Promise((r) => setTimeout(r, retry * 1000));
    assert.equal((await get(`${srv.url()}/w`, user)).status, 200);
    assert.equal(await origin.count("/w"), 3);
  } finally {
    await srv.stop();
    await origin.stop();
  }
});

Deno.test("rate_limit: sweep_interval drops the limiters whose events all left the window (ratelimit.go sweep)", async () => {
  const { allZones } = await import("../../../lib/server/http/handlers/rate_limit/zones.ts");
  const origin = await startOrigin();
  const srv = await serve([{
    handle: [
      limit(
        { swept: { key: "{http.request.header.X-User}", window: "100ms", max_events: 5 } },
        { sweep_interval: "50ms" },
      ),
      proxy(origin.dial),
    ],
  }]);
  try {
    for (const u of ["a", "b", "c"]) await get(`${srv.url()}/s`, { "X-User": u });
    assert.equal(await origin.count("/s"), 3);
    const zone = allZones().get("swept")!;
    assert.equal(zone.limiters.size, 3);
    const deadline = Date.now() + 10_000;
    while (zone.limiters.size > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(zone.limiters.size, 0);
  } finally {
    await srv.stop();
    await origin.stop();
  }
  // the state is let go once no loaded config names the zone
  assert.equal(allZones().has("swept"), false);
});
