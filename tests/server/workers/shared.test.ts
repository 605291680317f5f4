/**
 * What the workers share where users see it: one log pipeline (the access log of both
 * workers in one file, whole lines), `/metrics` (on the admin API and through a site's
 * `metrics` handler) and `/reverse_proxy/upstreams` summed over the workers, and the local CA
 * and a site's certificate made once and served by both.
 */
import assert from "node:assert/strict";
import { call, freePort, until } from "../fixtures/helpers.ts";
import { finish, serve, up } from "../fixtures/process.ts";
import { answersByWorker, hit, tlsAnswersByWorker, workerRoute } from "./_workers.ts";

Deno.test("workers: both workers' access logs go through one pipeline in whole lines; /metrics and /reverse_proxy/upstreams sum the workers'", async () => {
  const port = freePort();
  const dead = freePort(); // nothing listens there: every proxied request fails
  const dir = await Deno.makeTempDir();
  const log = `${dir}/access.log`;
  const s = await serve({
    logging: {
      logs: {
        default: { writer: { output: "discard" } },
        access: {
          writer: { output: "file", filename: log },
          encoder: { format: "json" },
          include: ["http.log.access"],
        },
      },
    },
    apps: {
      http: {
        metrics: {},
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            logs: {},
            routes: [
              {
                match: [{ path: ["/metrics"] }],
                handle: [{
                  handler: "headers",
                  response: { set: { "X-Worker": ["{env.GATEHOUSE_WORKER}"] } },
                }, { handler: "metrics" }],
              },
              {
                match: [{ path: ["/proxy"] }],
                handle: [{
                  handler: "reverse_proxy",
                  upstreams: [{ dial: `127.0.0.1:${dead}` }],
                  health_checks: { passive: { fail_duration: "1m", max_fails: 1000 } },
                }],
              },
              workerRoute("hi"),
            ],
          },
        },
      },
    },
  }, ["--workers", "2"]);
  try {
    await up(s.base);
    // requests on new connections until both workers answered, then some more
    const seen = await answersByWorker(port);
    assert.deepEqual([...seen.keys()].sort(), ["1", "2"]);
    let served = 0;
    const byWorker = new Map<string, number>();
    const note = (w: string) => byWorker.set(w, (byWorker.get(w) ?? 0) + 1);
    for (; served < 40; served++) note((await hit(port, `/n/${served}`)).worker);
    const proxied = 12;
    for (let i = 0; i < proxied; i++) assert.equal((await hit(port, "/proxy")).status, 502);
    assert.ok(byWorker.size === 2, `both workers answered: ${[...byWorker]}`);

    // one file, every line a whole JSON record; the numbered requests each once
    const lines = async () => (await Deno.readTextFile(log).catch(() => "")).split("\n");
    await until(
      async () => (await lines()).filter((l) => l.includes('"uri":"/n/')).length === served,
      30_000,
      "every access log line",
    );
    const text = await Deno.readTextFile(log);
    assert.ok(text.endsWith("\n"));
    const records = text.slice(0, -1).split("\n").map((l) => JSON.parse(l));
    const numbered = records.filter((r) => r.request.uri.startsWith("/n/"));
    assert.deepEqual(
      numbered.map((r) => Number(r.request.uri.slice(3))).sort((a, b) => a - b),
      Array.from({ length: served }, (_, i) => i),
    );
    const logged = new Map<string, number>();
    for (const r of numbered) {
      const w = r.resp_headers["X-Worker"][0];
      logged.set(w, (logged.get(w) ?? 0) + 1);
    }
    assert.deepEqual([...logged].sort(), [...byWorker].sort());

    // the admin API sums the workers' metrics and merges their upstream records
    const metrics = (await call(s.base, "GET", "/metrics")).body;
    const sample = (name: string, labels: string) =>
      Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, "m").exec(metrics)?.[1]);
    const routed = records.filter((r) =>
      !r.request.uri.startsWith("/proxy") && !r.request.uri.startsWith("/metrics")
    ).length;
    assert.equal(sample("caddy_http_requests_total", 'server="s",handler="headers"'), routed);
    assert.equal(
      sample("caddy_http_requests_total", 'server="s",handler="reverse_proxy"'),
      proxied,
    );
    assert.equal((metrics.match(/^# TYPE caddy_http_requests_total /gm) ?? []).length, 1);
    // the `metrics` handler of a site answers the same sum, whichever worker it reaches
    const scraped = new Map<string, string>();
    for (let i = 0; i < 400 && scraped.size < 2; i++) {
      const a = await hit(port, "/metrics");
      scraped.set(a.worker, a.body);
    }
    assert.deepEqual([...scraped.keys()].sort(), ["1", "2"]);
    for (const text of scraped.values()) {
      assert.equal(
        Number(
          /^caddy_http_requests_total\{server="s",handler="reverse_proxy"\} (\S+)$/m
            .exec(text)?.[1],
        ),
        proxied,
      );
    }
    const upstreams = JSON.parse((await call(s.base, "GET", "/reverse_proxy/upstreams")).body);
    assert.deepEqual(upstreams, [{
      address: `127.0.0.1:${dead}`,
      num_requests: 0,
      fails: proxied,
    }]);
  } finally {
    await call(s.base, "POST", "/stop").catch(() => {});
    assert.equal(await finish(s.p, s.dir), 0, s.p.output());
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("workers: the local CA and a site's certificate are made once and served by both workers", async () => {
  const port = freePort();
  const name = "shared.internal";
  const s = await serve({
    logging: { logs: { default: { writer: { output: "discard" } } } },
    apps: {
      http: {
        http_port: freePort(),
        https_port: port,
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable_redirects: true },
            routes: [workerRoute("secure", [{ host: [name] }])],
          },
        },
      },
      tls: { automation: { policies: [{ subjects: [name], issuers: [{ module: "internal" }] }] } },
    },
  }, ["--workers", "2"]);
  try {
    await up(s.base);
    const seen = await tlsAnswersByWorker(port, name);
    assert.deepEqual([...seen.keys()].sort(), ["1", "2"]);
    const [a, b] = [...seen.values()];
    assert.equal(a.body, "secure");
    assert.equal(a.serial, b.serial, "one certificate, served by both");
    assert.deepEqual(a.chain, b.chain);
    const ca = JSON.parse((await call(s.base, "GET", "/pki/ca/local")).body);
    assert.equal(a.chain[1], ca.intermediate_certificate, "issued by the one local CA");
    const roots = [...Deno.readDirSync(`${s.dir}/data/gatehouse/pki/authorities`)];
    assert.deepEqual(roots.map((e) => e.name), ["local"]);
  } finally {
    await call(s.base, "POST", "/stop").catch(() => {});
    assert.equal(await finish(s.p, s.dir), 0, s.p.output());
  }
});

Deno.test("workers: the cache's admin API lists every worker's entries and a purge empties every worker's cache", async () => {
  const port = freePort();
  const s = await serve({
    logging: { logs: { default: { writer: { output: "discard" } } } },
    apps: {
      http: {
        servers: {
          s: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            routes: [{
              handle: [
                {
                  handler: "headers",
                  response: { set: { "X-Worker": ["{env.GATEHOUSE_WORKER}"] } },
                },
                { handler: "cache", ttl: "10m" },
                {
                  handler: "static_response",
                  headers: { "Cache-Control": ["max-age=600"] },
                  body: "from worker {env.GATEHOUSE_WORKER}",
                },
              ],
            }],
          },
        },
      },
    },
  }, ["--workers", "2"]);
  try {
    await up(s.base);
    // new connections until both workers answered: each stored the answer in its own cache
    const seen = await answersByWorker(port, 2, "/page");
    assert.deepEqual([...seen.keys()].sort(), ["1", "2"]);
    const entries = JSON.parse((await call(s.base, "GET", "/cache/entries")).body) as {
      url: string;
    }[];
    assert.equal(entries.length, 2, JSON.stringify(entries));
    assert.ok(entries.every((e) => e.url.endsWith("/page")), JSON.stringify(entries));
    const purge = await call(s.base, "POST", "/cache/purge", { all: true });
    assert.equal(purge.status, 200, purge.body);
    assert.deepEqual(JSON.parse(purge.body), { purged: 2 });
    assert.deepEqual(JSON.parse((await call(s.base, "GET", "/cache/entries")).body), []);
  } finally {
    await call(s.base, "POST", "/stop").catch(() => {});
    assert.equal(await finish(s.p, s.dir), 0, s.p.output());
  }
});
