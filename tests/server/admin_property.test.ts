/**
 * Property tests (fast-check, bounded) of the admin API's parsers at the handler level: request
 * paths, Host values and JSON bodies. Whatever the input: no throw out of the handler, never a
 * 5xx, a JSON `{"error"}` body on every 4xx, and a path never reaches outside what it names.
 * A config with one bad field (wrong type, unknown field) in a section the engine decodes is a
 * 4xx JSON error that changes nothing: same tree, same site, no new listener.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { Engine } from "../../admin.ts";
import "./fixtures/test_app.ts";
import { createAdminHandler } from "../../lib/server/admin/handler.ts";
import { adminSecurity } from "../../lib/server/admin/security.ts";
import { parseNetworkAddress } from "../../lib/server/net/address.ts";
import { parseAdminPath, validHost } from "../../lib/server/admin/request.ts";
import { checkJsonDepth } from "../../lib/server/config_tree.ts";
import { AdminError } from "../../lib/server/errors.ts";
import { adminSegment } from "./fixtures/admin_arbitraries.ts";
import { badConfig, fullConfig } from "./fixtures/bad_config.ts";
import { freePort } from "./fixtures/helpers.ts";
import { refuses } from "./fixtures/sockets.ts";

const QUIET = { logs: { default: { writer: { output: "discard" } } } };

Deno.test("property: an admin path parses to exactly its decoded segments, or is refused with 400/414", () => {
  const target = fc.tuple(
    fc.array(adminSegment, { maxLength: 8 }),
    fc.constantFrom("", "?", "?a=%2e%2e/..", "#x"),
  ).map(([segs, tail]) => "/" + segs.join("/") + tail);
  fc.assert(
    fc.property(target, (t) => {
      let out: string;
      try {
        out = parseAdminPath(t);
      } catch (e) {
        assert.ok(e instanceof AdminError, String(e));
        assert.ok(e.status === 400 || e.status === 414, `${t}: ${e.status}`);
        return;
      }
      const raw = t.replace(/[?#].*$/s, "").slice(1).split("/");
      const segs = out.slice(1).split("/");
      assert.equal(segs.length, raw.length, `${t} -> ${out}: one segment per raw segment`);
      segs.forEach((s, i) => {
        assert.ok(s !== "." && s !== "..", `${t}: dot-segment kept`);
        assert.ok(!s.includes("/") && !s.includes("\\"), `${t}: slash inside a segment`);
        assert.equal(s, decodeURIComponent(raw[i]), `${t}: segment ${i}`);
      });
    }),
    { numRuns: 5000 },
  );
});

Deno.test("property: validHost never throws and accepts nothing that could change a URL's path", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ maxLength: 40 }),
        fc.domain(),
        fc.tuple(fc.domain(), fc.nat({ max: 99999 })).map(([d, p]) => `${d}:${p}`),
        fc.ipV6().map((ip) => `[${ip}]:2019`),
      ),
      (host) => {
        if (validHost(host)) {
          assert.doesNotMatch(host, /[/?#@\\\s]/, host);
          // what a server builds from it ("" means no authority: it puts its own there)
          let url: URL | undefined;
          try {
            url = new URL(`http://${host}/config/`);
          } catch { /* a WHATWG parser may still refuse it (e.g. "%00"): no path either way */ }
          if (host !== "" && url) assert.equal(url.pathname, "/config/", host);
        }
      },
    ),
    { numRuns: 5000 },
  );
});

function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v !== null && typeof v === "object") {
    return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  }
  return 0;
}

Deno.test("property: the JSON depth check refuses exactly the documents nested past the limit", () => {
  const nested = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.jsonValue({ maxDepth: 2 }),
      fc.array(tie("node"), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 4 }), tie("node"), { maxKeys: 3 }),
    ),
  })).node;
  fc.assert(
    fc.property(nested, fc.integer({ min: 1, max: 8 }), (value, max) => {
      const text = JSON.stringify(value);
      const deep = depthOf(value) > max;
      let refused = false;
      try {
        checkJsonDepth(text, max);
      } catch (e) {
        assert.ok(e instanceof AdminError && e.status === 400, String(e));
        refused = true;
      }
      assert.equal(refused, deep, `${text} at max ${max}`);
    }),
    { numRuns: 3000 },
  );
  // malformed text never makes it throw anything but a 400
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (text) => {
      try {
        checkJsonDepth(text, 3);
      } catch (e) {
        assert.ok(e instanceof AdminError && e.status === 400, String(e));
      }
    }),
    { numRuns: 3000 },
  );
});

/** JSON bodies: valid, deep, huge, malformed. */
const body = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.nat({ max: 5000 }).map((n) => "[".repeat(n) + "]".repeat(n)),
  fc.nat({ max: 5000 }).map((n) => '{"a":'.repeat(n) + "1" + "}".repeat(n)),
  fc.nat({ max: 3000 }).map((n) => "[".repeat(n)),
  fc.tuple(fc.json({ maxDepth: 3 }), fc.nat(), fc.string({ maxLength: 3 })).map(([j, at, s]) =>
    j.slice(0, at % (j.length + 1)) + s + j.slice(at % (j.length + 1))
  ),
  fc.string({ maxLength: 50 }),
  fc.nat({ max: 2_000_000 }).map((n) => `{"apps":{"gatehouse_test":{"tag":"${"x".repeat(n)}"}}}`),
);

Deno.test({
  name:
    "property: the admin handler answers any JSON body to any endpoint with 2xx or a 4xx JSON error",
  // a few loads start and stop the test app; their timers settle within the test
  sanitizeOps: false,
  async fn() {
    const engine = new Engine({ defaultAdmin: false, maxBodyBytes: 1024 * 1024 });
    const base = {
      logging: QUIET,
      apps: { gatehouse_test: { "@id": "t", tag: "t", items: [] } },
    };
    await engine.load(base);
    const handler = createAdminHandler(
      engine,
      adminSecurity(parseNetworkAddress("127.0.0.1:2019"), 2019, {}),
    );
    const info = {
      remoteAddr: { transport: "tcp" as const, hostname: "127.0.0.1", port: 1 },
      localAddress: "127.0.0.1:2019",
      completed: Promise.resolve(),
    };
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom("POST", "PUT", "PATCH", "DELETE", "GET"),
          fc.constantFrom(
            "/load",
            "/adapt",
            "/config/",
            "/config/apps/gatehouse_test/items",
            "/config/apps/gatehouse_test/tag",
            "/config/apps/gatehouse_test/new",
            "/id/t/items/...",
            "/config/apps/gatehouse_test/items/0",
          ),
          body,
          async (method, path, text) => {
            const req = new Request(`http://127.0.0.1:2019${path}`, {
              method,
              headers: { host: "127.0.0.1:2019", "content-type": "application/json" },
              body: method === "GET" ? undefined : text,
            });
            const res = await handler(req, info);
            const answer = await res.text();
            assert.ok(res.status < 500, `${method} ${path} ${text.slice(0, 60)}: ${res.status}`);
            if (res.status >= 400) {
              assert.equal(res.headers.get("content-type"), "application/json");
              assert.equal(typeof JSON.parse(answer).error, "string");
            }
            // keep the next run's starting point: the base config
            if (res.status < 300 && method !== "GET") await engine.load(base, true);
          },
        ),
        { numRuns: 300, interruptAfterTimeLimit: 60_000 },
      );
    } finally {
      await engine.shutdown();
    }
  },
});

Deno.test({
  name:
    "property: a /load with one bad field in the top level, admin, logging, storage or apps is a 4xx JSON error and changes nothing",
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-test-" });
    const adminPort = freePort();
    const sitePort = freePort();
    const engine = new Engine({ defaultAdmin: false });
    const base = {
      admin: { listen: `127.0.0.1:${adminPort}` },
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
    await engine.load(base);
    const admin = `http://127.0.0.1:${adminPort}`;
    const before = await (await fetch(`${admin}/config/`)).text();
    const ports = {
      admin: `127.0.0.1:${freePort()}`,
      site: `127.0.0.1:${freePort()}`,
      storage: `${dir}/storage`,
    };
    // the template itself is good: it loads (and moves everything), then the base comes back
    const good = await fetch(`${admin}/load`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(fullConfig(ports)),
    });
    assert.equal(good.status, 200, await good.text());
    await engine.load(base);
    try {
      await fc.assert(
        fc.asyncProperty(badConfig(ports), async ({ label, config }) => {
          const r = await fetch(`${admin}/load`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(config),
          });
          const answer = await r.text();
          assert.ok(r.status >= 400 && r.status < 500, `${label}: ${r.status} ${answer}`);
          assert.equal(r.headers.get("content-type"), "application/json", label);
          assert.equal(typeof JSON.parse(answer).error, "string", label);
          assert.equal(await (await fetch(`${admin}/config/`)).text(), before, label);
          const site = await fetch(`http://127.0.0.1:${sitePort}/`);
          assert.equal(await site.text(), "A", `${label}: the running site`);
          assert.ok(await refuses(Number(ports.site.split(":")[1])), `${label}: new site opened`);
          assert.ok(await refuses(Number(ports.admin.split(":")[1])), `${label}: new admin opened`);
        }),
        { numRuns: 300, interruptAfterTimeLimit: 60_000 },
      );
    } finally {
      await engine.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
