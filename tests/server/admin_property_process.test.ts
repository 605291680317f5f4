/**
 * Property test (fast-check, bounded) through a real `gatehouse run` process and raw sockets:
 * random admin requests (paths built from real keys and every spelling of `..`, `/` and `\`,
 * any method, valid/deep/malformed JSON bodies) never get a 5xx, get a JSON error on every 4xx,
 * and never reach outside the scope their raw path names: only a request whose path names the
 * whole config (`/load`, `/config/`) installs the `/load` marker, and a request under
 * `/config/apps/gatehouse_test/` or `/id/t/` changes nothing outside that object. A config with
 * one bad field in a section the engine decodes (top level, admin, logging, storage, apps) is a
 * 4xx JSON error, and the running config, its site and its admin endpoint stay as they were.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { CLI_TEST_APP, freePort, spawnCli, tempEnv, until } from "./fixtures/helpers.ts";
import { rawExchange } from "./fixtures/raw_admin.ts";
import { adminSegment } from "./fixtures/admin_arbitraries.ts";
import { badConfig } from "./fixtures/bad_config.ts";
import { refuses } from "./fixtures/sockets.ts";

const QUIET = { logs: { default: { writer: { output: "discard" } } } };

Deno.test("property: random admin requests to a real process: never 5xx, JSON errors, never out of scope", async () => {
  const t = await tempEnv();
  const port = freePort();
  const base = {
    admin: { listen: `127.0.0.1:${port}` },
    logging: QUIET,
    apps: { gatehouse_test: { "@id": "t", tag: "t", items: [] } },
  };
  const baseText = JSON.stringify(base);
  const marker = JSON.stringify({
    ...base,
    apps: { gatehouse_test: { "@id": "t", tag: "VIA-LOAD", items: [] } },
  });
  await Deno.writeTextFile(`${t.dir}/c.json`, baseText);
  // the default admin address is the same: a request that unloads the config keeps it there
  const env = { ...t.env, GATEHOUSE_ADMIN: `127.0.0.1:${port}` };
  const p = spawnCli(["run", "-c", `${t.dir}/c.json`], env, t.dir, false, CLI_TEST_APP);
  const json = { "content-type": "application/json" };
  const getConfig = async () => {
    const r = await rawExchange(port, "GET", "/config/");
    assert.equal(r.status, 200, r.body);
    return JSON.parse(r.body);
  };
  try {
    await until(async () => (await rawExchange(port, "GET", "/config/")).status === 200);
    const prefix = fc.constantFrom(
      "/config/apps/gatehouse_test/",
      "/config/",
      "/id/t/",
      "/",
      "/load/",
      "/adapt/",
      "/reverse_proxy/",
    );
    const target = fc.tuple(prefix, fc.array(adminSegment, { maxLength: 5 }), fc.boolean())
      .map(([pre, segs, query]) => pre + segs.join("/") + (query ? "?x=%2e%2e/../load" : ""));
    const body = fc.oneof(
      fc.constant(marker),
      fc.constant('"VIA-CONFIG"'),
      fc.constant('{"x":1}'),
      fc.json({ maxDepth: 3 }),
      fc.nat({ max: 3000 }).map((n) => "[".repeat(n) + "]".repeat(n)),
      fc.string({ maxLength: 20 }),
    );
    const method = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS");
    await fc.assert(
      fc.asyncProperty(target, method, body, async (path, m, text) => {
        const r = await rawExchange(port, m, path, {
          body: m === "GET" || m === "OPTIONS" ? undefined : text,
          headers: json,
        });
        const label = `${m} ${path} ${text.slice(0, 40)}`;
        assert.ok(r.status > 0 && r.status < 500, `${label}: ${r.status} ${r.body}`);
        if (r.status >= 400) {
          assert.equal(r.headers.get("content-type"), "application/json", label);
          assert.equal(typeof JSON.parse(r.body).error, "string", label);
        }
        const after = await getConfig();
        if (r.status >= 400 || m === "GET" || m === "OPTIONS") {
          assert.deepEqual(after, base, `${label}: a refused or read-only request changed nothing`);
        }
        const raw = path.replace(/\?.*$/, "");
        if (!["/load", "/config", "/config/"].includes(raw)) {
          assert.deepEqual(after?.admin, base.admin, `${label}: admin section untouched`);
          assert.deepEqual(after?.logging, base.logging, `${label}: logging untouched`);
        }
        // only a request naming the whole config (/load, /config/) may install the marker
        if (!["/load", "/config", "/config/"].includes(raw)) {
          assert.notEqual(after?.apps?.gatehouse_test?.tag, "VIA-LOAD", `${label}: reached /load`);
        }
        if (raw.startsWith("/config/apps/gatehouse_test/") || raw.startsWith("/id/t/")) {
          const others = Object.keys(after?.apps ?? {}).filter((k) => k !== "gatehouse_test");
          assert.deepEqual(others, [], `${label}: changed something outside its object`);
        }
        // back to the starting point for the next run
        const reset = await rawExchange(port, "POST", "/load", { body: baseText, headers: json });
        assert.equal(reset.status, 200, reset.body);
      }),
      // one process carries state from run to run: report the first failure as found, unshrunk
      { numRuns: 400, interruptAfterTimeLimit: 90_000, endOnFailure: true },
    );
    assert.equal((await rawExchange(port, "GET", "/config/")).status, 200, "still running");
  } finally {
    p.child.kill("SIGTERM");
    await p.status;
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("property: a real process refuses configs with one bad field and keeps serving the running one", async () => {
  const t = await tempEnv();
  const port = freePort();
  const sitePort = freePort();
  const base = {
    admin: { listen: `127.0.0.1:${port}` },
    logging: QUIET,
    apps: {
      http: {
        servers: {
          a: {
            listen: [`127.0.0.1:${sitePort}`],
            routes: [{ handle: [{ handler: "static_response", body: "A" }] }],
          },
        },
      },
    },
  };
  await Deno.writeTextFile(`${t.dir}/c.json`, JSON.stringify(base));
  const p = spawnCli(["run", "-c", `${t.dir}/c.json`], t.env, t.dir);
  const ports = {
    admin: `127.0.0.1:${freePort()}`,
    site: `127.0.0.1:${freePort()}`,
    storage: `${t.dir}/storage`,
  };
  const json = { "content-type": "application/json" };
  try {
    await until(async () => (await rawExchange(port, "GET", "/config/")).status === 200);
    const before = (await rawExchange(port, "GET", "/config/")).body;
    await fc.assert(
      fc.asyncProperty(
        badConfig(ports),
        fc.constantFrom("/load", "/config/"),
        async ({ label, config }, path) => {
          const r = await rawExchange(port, "POST", path, {
            body: JSON.stringify(config),
            headers: json,
          });
          const what = `POST ${path} ${label}`;
          assert.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status} ${r.body}`);
          assert.equal(r.headers.get("content-type"), "application/json", what);
          assert.equal(typeof JSON.parse(r.body).error, "string", what);
          const after = await rawExchange(port, "GET", "/config/");
          assert.equal(after.body, before, `${what}: GET /config/ unchanged`);
          const site = await rawExchange(sitePort, "GET", "/");
          assert.equal(`${site.status} ${site.body}`, "200 A", `${what}: the running site`);
          assert.ok(await refuses(Number(ports.site.split(":")[1])), `${what}: new site opened`);
          assert.ok(await refuses(Number(ports.admin.split(":")[1])), `${what}: admin moved`);
        },
      ),
      { numRuns: 200, interruptAfterTimeLimit: 60_000, endOnFailure: true },
    );
  } finally {
    p.child.kill("SIGTERM");
    await p.status;
    await Deno.remove(t.dir, { recursive: true });
  }
});
