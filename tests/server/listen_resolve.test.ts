/**
 * A `/load` whose listen address holds a host name: the name is resolved asynchronously (here
 * against a real DNS server on loopback that answers slowly, or never), with a time limit,
 * before the swap; meanwhile the running sites and the admin API keep answering.
 */
import assert from "node:assert/strict";
import { Engine } from "../../admin.ts";
import "../../lib/server/standard.ts";
import { call, freePort, until } from "./fixtures/helpers.ts";
import { startDnsServer } from "./fixtures/dns_server.ts";
import { refuses } from "./fixtures/sockets.ts";

const QUIET = { logs: { default: { writer: { output: "discard" } } } };

function config(sites: Record<string, [string, string]>) {
  const servers: Record<string, unknown> = {};
  for (const [name, [listen, body]] of Object.entries(sites)) {
    servers[name] = {
      listen: [listen],
      routes: [{ handle: [{ handler: "static_response", body }] }],
    };
  }
  return { logging: QUIET, apps: { http: { servers } } };
}

async function text(url: string): Promise<string> {
  return await (await fetch(url)).text();
}

Deno.test("a slow listen host name does not hold the event loop: other sites and the admin API answer meanwhile", async () => {
  const dns = await startDnsServer({
    "slow.gatehouse.test": { address: "127.0.0.1", delayMs: 1500 },
  });
  const engine = new Engine({
    defaultAdmin: "127.0.0.1:0",
    resolve: { nameServer: { ipAddr: "127.0.0.1", port: dns.port }, timeoutMs: 5000 },
  });
  try {
    const a = freePort();
    await engine.load(config({ a: [`127.0.0.1:${a}`, "site a"] }));
    const base = `http://${engine.adminAddress}`;
    const b = freePort();
    let done = false;
    const loading = call(
      base,
      "POST",
      "/load",
      config({ a: [`127.0.0.1:${a}`, "site a"], b: [`slow.gatehouse.test:${b}`, "site b"] }),
    ).finally(() => (done = true));
    await until(() => dns.queries.includes("slow.gatehouse.test"), 10000, "the lookup to start");
    // while the name is being resolved
    assert.equal(await text(`http://127.0.0.1:${a}/`), "site a");
    const during = await call(base, "GET", "/config/apps/http/servers");
    assert.equal(during.status, 200);
    assert.deepEqual(Object.keys(JSON.parse(during.body)), ["a"]);
    assert.equal(done, false, "the site and the admin API answered before the lookup ended");
    const r = await loading;
    assert.equal(r.status, 200, r.body);
    assert.equal(await text(`http://127.0.0.1:${b}/`), "site b");
    assert.equal(await text(`http://127.0.0.1:${a}/`), "site a");
  } finally {
    await engine.shutdown();
    await dns.close();
  }
});

Deno.test({
  name: "a listen host name without an answer fails the load after the time limit; nothing changes",
  // the unanswered lookup is left to the resolver's own timeouts after the limit
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const dns = await startDnsServer({ "never.gatehouse.test": "blackhole" });
  const engine = new Engine({
    defaultAdmin: "127.0.0.1:0",
    resolve: { nameServer: { ipAddr: "127.0.0.1", port: dns.port }, timeoutMs: 800 },
  });
  try {
    const a = freePort();
    await engine.load(config({ a: [`127.0.0.1:${a}`, "site a"] }));
    const base = `http://${engine.adminAddress}`;
    const before = (await call(base, "GET", "/config/")).body;
    const b = freePort();
    let done = false;
    const loading = call(
      base,
      "POST",
      "/load",
      config({ a: [`127.0.0.1:${a}`, "site a"], b: [`never.gatehouse.test:${b}`, "b"] }),
    ).finally(() => (done = true));
    await until(() => dns.queries.includes("never.gatehouse.test"), 10000, "the lookup to start");
    assert.equal(await text(`http://127.0.0.1:${a}/`), "site a");
    assert.equal((await call(base, "GET", "/config/")).status, 200);
    assert.equal(done, false);
    const r = await loading;
    assert.equal(r.status, 400);
    assert.match(
      JSON.parse(r.body).error,
      /resolving listen address host 'never\.gatehouse\.test': no answer within 0\.8s/,
    );
    assert.equal((await call(base, "GET", "/config/")).body, before);
    assert.equal(await text(`http://127.0.0.1:${a}/`), "site a");
    assert.ok(await refuses(b), "nothing listens on the new site's port");
    // a name that does not exist fails at once with its own message
    const nx = await call(base, "POST", "/load", config({ b: [`nx.gatehouse.test:${b}`, "b"] }));
    assert.equal(nx.status, 400);
    assert.match(JSON.parse(nx.body).error, /'nx\.gatehouse\.test': no such host/);
    assert.equal((await call(base, "GET", "/config/")).body, before);
  } finally {
    await engine.shutdown();
    await dns.close();
  }
});

Deno.test("names from the hosts file and IP literals bind as before", async () => {
  const engine = new Engine({ defaultAdmin: false });
  try {
    const p = freePort();
    const q = freePort();
    await engine.load(
      config({ a: [`localhost:${p}`, "by name"], b: [`tcp4/127.0.0.1:${q}`, "ip"] }),
    );
    assert.equal(await text(`http://127.0.0.1:${p}/`), "by name");
    assert.equal(await text(`http://127.0.0.1:${q}/`), "ip");
  } finally {
    await engine.shutdown();
  }
});
