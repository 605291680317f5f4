/**
 * Hostile input to the admin API over raw sockets: paths that try to leave their scope in any
 * encoding, malformed Host and percent-encoding, absurdly deep or malformed JSON, and requests
 * a browser makes on behalf of another site. Every one gets a 4xx with a JSON `{"error"}` body,
 * and the running config is unchanged afterwards.
 */
import assert from "node:assert/strict";
import { startServer } from "../../admin.ts";
import "./fixtures/test_app.ts";
import { call, freePort } from "./fixtures/helpers.ts";
import { rawExchange } from "./fixtures/raw_admin.ts";

const QUIET = { logs: { default: { writer: { output: "discard" } } } };
const CONFIG = { logging: QUIET, apps: { gatehouse_test: { tag: "before", items: [] } } };
/** What a request that reached `/load` (or a config path) would have installed. */
const HOSTILE = JSON.stringify({ apps: { gatehouse_test: { tag: "hijacked" } } });

async function withServer(
  fn: (port: number, base: string) => Promise<void>,
  config: unknown = CONFIG,
): Promise<void> {
  const s = await startServer({ adminAddress: "127.0.0.1:0", config });
  try {
    const base = s.adminUrl!;
    await fn(Number(new URL(base).port), base);
  } finally {
    await s.stop();
  }
}

/** Asserts a 4xx answer with a JSON `{"error": "..."}` body; returns the error text. */
function assertJsonError(
  r: { status: number; headers: Headers; body: string },
  status: number,
  what: string,
): string {
  assert.equal(r.status, status, `${what}: status (body ${r.body.slice(0, 200)})`);
  assert.equal(r.headers.get("content-type"), "application/json", `${what}: content-type`);
  const parsed = JSON.parse(r.body);
  assert.equal(typeof parsed.error, "string", `${what}: error field`);
  assert.ok(parsed.error.length > 0, `${what}: error text`);
  return parsed.error;
}

async function configText(base: string): Promise<string> {
  const r = await call(base, "GET", "/config/");
  assert.equal(r.status, 200);
  return r.body;
}

Deno.test("a path that leaves its scope is refused whatever its encoding", async () => {
  await withServer(async (port, base) => {
    const before = await configText(base);
    const escapes = [
      "/config/%2e%2e/load",
      "/config/%2E%2E/load",
      "/config/%2E./load",
      "/config/.%2e/load",
      "/config/../load",
      "/config/./../load",
      "/config/%252e%252e/load",
      "/config/%25252e%25252e/load",
      "/config/..%2fload",
      "/config/%2e%2e%2fload",
      "/config/%2e%2e%252fload",
      "/config/..\\load",
      "/config/%5c..%5cload",
      "/config/%2e%2e%5cload",
      "//load",
      "/config//..//load",
      "/config/apps/gatehouse_test/%2e%2e/%2e%2e/%2e%2e/load",
      "/id/x/%2e%2e/%2e%2e/load",
      "/config/%2e",
      "/adapt/%2e%2e/load",
    ];
    for (const target of escapes) {
      const r = await rawExchange(port, "POST", target, {
        body: HOSTILE,
        headers: { "content-type": "application/json" },
      });
      const error = assertJsonError(r, 400, target);
      assert.match(error, /scope|segment|backslash/, target);
    }
    assert.equal(await configText(base), before, "no request reached /load or changed a key");
    // the same requests in their honest form do reach what they name
    const ok = await rawExchange(port, "POST", "/config/apps/gatehouse_test/tag", {
      body: '"after"',
      headers: { "content-type": "application/json" },
    });
    assert.equal(ok.status, 200);
    assert.match(await configText(base), /"tag":"after"/);
  });
});

Deno.test("malformed Host and bad percent-encoding answer 400 with a JSON error", async () => {
  await withServer(async (port, base) => {
    const before = await configText(base);
    for (const host of ["a b", "evil.example/x", "[::1", "h%zz", "x@127.0.0.1", "a#b", "1:2:3"]) {
      const r = await rawExchange(port, "GET", "/config/", { host });
      assert.match(assertJsonError(r, 400, `Host ${host}`), /malformed Host header/);
      const post = await rawExchange(port, "POST", "/load", {
        host,
        body: HOSTILE,
        headers: { "content-type": "application/json" },
      });
      assertJsonError(post, 400, `POST /load with Host ${host}`);
    }
    for (
      const target of ["/config/apps%zz", "/config/%", "/config/%e9", "/config/%c3%28", "/id/%g1"]
    ) {
      const r = await rawExchange(port, "GET", target);
      assert.match(assertJsonError(r, 400, target), /percent-encoding|UTF-8/, target);
    }
    for (const target of ["/config/a%00b", "/config/%0d%0aX"]) {
      assertJsonError(await rawExchange(port, "GET", target), 400, target);
    }
    const long = await rawExchange(port, "GET", "/config/" + "a".repeat(9000));
    assertJsonError(long, 414, "long target");
    assert.equal(await configText(base), before);
    // a valid percent-encoded key still works
    const put = await rawExchange(port, "PUT", "/config/apps/gatehouse_test/my%20key", {
      body: "1",
      headers: { "content-type": "application/json" },
    });
    assert.equal(put.status, 200);
    assert.equal((await call(base, "GET", "/config/apps/gatehouse_test/my%20key")).body, "1\n");
  });
});

Deno.test("deep and malformed JSON bodies answer 4xx and change nothing", async () => {
  await withServer(async (port, base) => {
    const before = await configText(base);
    const deepArray = "[".repeat(100_000) + "]".repeat(100_000);
    const deepObject = '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000);
    const json = { "content-type": "application/json" };
    const cases: [string, string, string][] = [
      ["POST", "/load", deepArray],
      ["POST", "/load", `{"apps":{"gatehouse_test":{"x":${deepObject}}}}`],
      ["POST", "/adapt", deepObject],
      ["POST", "/config/apps/gatehouse_test/items", deepArray],
      ["PUT", "/config/apps/gatehouse_test/deep", deepObject],
      ["PATCH", "/config/apps/gatehouse_test/tag", deepArray],
      ["POST", "/load", '{"apps":'],
      ["POST", "/load", "[1,2,3]"],
      ["POST", "/load", '"a string"'],
      ["POST", "/config/apps/gatehouse_test/tag", "{'single':1}"],
      ["POST", "/load", "\u00ff\u00fe{}"],
    ];
    for (const [method, target, body] of cases) {
      const r = await rawExchange(port, method, target, { body, headers: json });
      const status = r.status;
      assert.ok(status >= 400 && status < 500, `${method} ${target}: ${status}`);
      assertJsonError(r, status, `${method} ${target} (${body.slice(0, 20)}...)`);
    }
    // other adapters' input nested past what the code walking it can follow: 400 as well
    for (
      const [type, text] of [["application/json5", deepObject], [
        "text/caddyfile",
        ":80 {\n" + "route {\n".repeat(20_000),
      ]]
    ) {
      for (const target of ["/load", "/adapt"]) {
        const r = await rawExchange(port, "POST", target, {
          body: text,
          headers: { "content-type": type },
        });
        assertJsonError(r, 400, `${target} ${type}`);
      }
    }
    const nested = await rawExchange(port, "POST", "/load", { body: deepArray, headers: json });
    assert.match(JSON.parse(nested.body).error, /nested deeper than 1000 levels/);
    // 1000 levels is within the limit and round-trips
    const ok = "[".repeat(999) + "]".repeat(999);
    const put = await rawExchange(port, "PUT", "/config/apps/gatehouse_test/ok", {
      body: ok,
      headers: json,
    });
    assert.equal(put.status, 200, put.body);
    await call(base, "DELETE", "/config/apps/gatehouse_test/ok");
    assert.equal(await configText(base), before);
  });
});

Deno.test("browser requests from another site are refused by default; allowed origins work", async () => {
  await withServer(async (port, base) => {
    const before = await configText(base);
    const post = (headers: Record<string, string>) =>
      rawExchange(port, "POST", "/load", {
        body: HOSTILE,
        headers: { "content-type": "application/json", ...headers },
      });
    const refused: Record<string, string>[] = [
      { origin: "http://evil.example" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" },
      { "sec-fetch-mode": "no-cors", origin: `http://127.0.0.1:${port}` },
      { "sec-fetch-site": "cross-site", referer: "http://evil.example/page" },
      { "sec-fetch-dest": "empty" },
      { origin: `http://127.0.0.1:${port + 1}` },
      { origin: `https://127.0.0.1:${port}.evil.example` },
    ];
    for (const h of refused) {
      const r = await post(h);
      assertJsonError(r, 403, JSON.stringify(h));
      assert.equal(r.headers.get("access-control-allow-origin"), null);
    }
    const preflight = await rawExchange(port, "OPTIONS", "/load", {
      headers: { origin: "http://evil.example", "access-control-request-method": "POST" },
    });
    assertJsonError(preflight, 403, "preflight from another site");
    assert.equal(await configText(base), before, "no refused request changed the config");

    // same-origin browser requests and plain API clients still work
    const same = await rawExchange(port, "GET", "/config/", {
      headers: { origin: `http://localhost:${port}`, "sec-fetch-site": "same-origin" },
    });
    assert.equal(same.status, 200);
    assert.equal(same.headers.get("access-control-allow-origin"), `http://localhost:${port}`);
    const byReferer = await rawExchange(port, "GET", "/config/", {
      headers: { "sec-fetch-mode": "cors", referer: `http://127.0.0.1:${port}/ui` },
    });
    assert.equal(byReferer.status, 200);
    assert.equal((await rawExchange(port, "GET", "/config/")).status, 200);
  });

  // an operator's console on another origin, listed in admin.origins, is allowed
  const port = freePort();
  const console = "https://console.example";
  await withServer(async (p) => {
    const ok = await rawExchange(p, "GET", "/config/", {
      headers: { origin: console, "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" },
    });
    assert.equal(ok.status, 200, ok.body);
    assert.equal(ok.headers.get("access-control-allow-origin"), console);
    const other = await rawExchange(p, "GET", "/config/", {
      headers: { origin: "https://other.example" },
    });
    assertJsonError(other, 403, "unlisted origin");
  }, {
    logging: QUIET,
    admin: { listen: `127.0.0.1:${port}`, origins: [`127.0.0.1:${port}`, console] },
  });
});
