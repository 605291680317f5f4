/**
 * `push` (HTTP/2 server push) against real peers on loopback: a Node 20 HTTP/2 client with push
 * on receives the configured resources and the response's Link resources, each served through
 * the routes with the push request's fields (as Caddy 2.6.2 pushes them for the same config);
 * with push off (SETTINGS_ENABLE_PUSH=0) nothing is pushed and the answer is the same; curl's
 * HTTP/2 (nghttp2) and HTTP/1.1 clients get the page with nothing pushed.
 */
import assert from "node:assert/strict";
import { makePki } from "../http/pki.ts";
import { runServer } from "../fields/_server.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";
import { caddyAvailable } from "./caddy.ts";
import {
  type Answer,
  caddyTls,
  type ClientRequest,
  curl,
  nodeH2Client,
  nodeVersion,
  pushRoutes,
} from "./_push.ts";

const NODE = nodeVersion();
const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });
const tlsApp = {
  certificates: { load_pem: [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }] },
};
const srv = await runServer({
  servers: {
    tls: { listen: ["127.0.0.1:0"], tls_connection_policies: [{}], routes: pushRoutes(), logs: {} },
    h2c: { listen: ["127.0.0.1:0"], protocols: ["h1", "h2c"], routes: pushRoutes(), logs: {} },
  },
}, { tls: tlsApp });
const https = `https://localhost:${srv.ports("tls")[0]}`;
const h2c = `http://127.0.0.1:${srv.ports("h2c")[0]}`;

/** What a browser-like client sends: the fields push requests copy, and one they do not. */
const FIELDS = {
  accept: "text/html",
  "accept-language": "en",
  "user-agent": "push-test/1",
  cookie: "session=secret",
};
const PAGE: ClientRequest = { path: "/page?asset=x.css", headers: FIELDS };

/** The parts of a push that the two servers must agree on. */
function pushView(p: Answer["pushes"][number]) {
  return {
    method: p.promised[":method"],
    path: p.promised[":path"],
    caddyPush: p.promised["caddy-push"],
    pushedBy: p.promised["x-pushed-by"],
    extra: p.promised["x-extra"],
    accept: p.promised.accept,
    language: p.promised["accept-language"],
    userAgent: p.promised["user-agent"],
    cookie: p.promised.cookie,
    status: p.status,
    body: p.body,
    seen: p.headers["x-seen"],
  };
}

/** Access log records of the server process (JSON lines in its output). */
function accessLog(): { uri: string; proto: string; method: string }[] {
  return srv.output().split("\n").filter((l) => l.includes('"http.log.access')).map((l) => {
    const r = JSON.parse(l.slice(l.indexOf("{"))).request;
    return { uri: r.uri, proto: r.proto, method: r.method };
  });
}

/** What a push of `method path` looks like: the fields every push carries, and its answer. */
function expectedPush(method: "GET" | "HEAD", path: string) {
  return {
    method,
    path,
    caddyPush: "1",
    pushedBy: "/page",
    extra: "1",
    accept: "text/push",
    language: "en",
    userAgent: undefined,
    cookie: undefined,
    status: 200,
    body: method === "HEAD" ? "" : `asset ${path}`,
    seen: `1|/page|1||text/push|en||${method}|HTTP/2.0`,
  };
}

const EXPECTED = [
  expectedPush("GET", "/style.css"),
  expectedPush("HEAD", "/x.css"),
  expectedPush("GET", "/app.js"),
  expectedPush("GET", "/icon.png?v=2"),
];

Deno.test({
  name: "push: a Node HTTP/2 client gets the resources and Link targets pushed, over TLS and h2c",
  ignore: !NODE,
  sanitizeResources: false,
  async fn() {
    for (const origin of [https, h2c]) {
      const [page, twice, early] = await nodeH2Client(origin, true, [
        PAGE,
        { path: "/twice" },
        { path: "/early" },
      ], pki.caPem);
      assert.equal(page.status, 200, origin);
      assert.equal(page.body, "<p>page</p>");
      // pushed: the two resources, then the same-origin Link targets without nopush
      assert.deepEqual(page.pushes.map(pushView), EXPECTED, origin);
      for (const p of page.pushes) {
        assert.equal(p.promised[":authority"], new URL(origin).host, "the request's own origin");
        assert.equal(p.promised[":scheme"], new URL(origin).protocol.slice(0, -1));
      }
      // two push handlers, one Link push
      assert.deepEqual(twice.pushes.map((p) => p.promised[":path"]), ["/app.js"]);
      assert.equal(twice.body, "twice");
      // a Link the headers handler set before the response existed
      assert.deepEqual(early.pushes.map((p) => p.promised[":path"]), ["/style.css"]);
    }
    // pushed requests are served and logged like any request, on HTTP/2
    const log = accessLog();
    for (const uri of ["/style.css", "/x.css", "/app.js", "/icon.png?v=2"]) {
      assert.ok(log.some((r) => r.uri === uri && r.proto === "HTTP/2.0"), `${uri} logged`);
    }
    assert.ok(!log.some((r) => r.uri === "/skip.js" || r.uri.includes("lib.js")));
  },
});

Deno.test({
  name: "push: Caddy 2.6.2 pushes the same resources with the same fields for the same routes",
  ignore: !NODE || !caddyAvailable(),
  sanitizeResources: false,
  async fn() {
    const caddy = await caddyTls(pushRoutes(), pki.leafs.local);
    try {
      const [theirs] = await nodeH2Client(caddy.origin, true, [PAGE], pki.caPem);
      const [ours] = await nodeH2Client(https, true, [PAGE], pki.caPem);
      assert.equal(theirs.pushes.length, 4, "Caddy pushed");
      assert.deepEqual(ours.pushes.map(pushView), theirs.pushes.map(pushView));
      assert.equal(ours.body, theirs.body);
    } finally {
      await caddy.stop();
    }
  },
});

Deno.test({
  name: "push: with push off, or on HTTP/1.1, nothing is pushed and the answer is the same",
  ignore: !NODE,
  sanitizeResources: false,
  async fn() {
    for (const origin of [https, h2c]) {
      const before = accessLog().length;
      const [on] = await nodeH2Client(origin, true, [PAGE], pki.caPem);
      const [off] = await nodeH2Client(origin, false, [PAGE], pki.caPem);
      assert.equal(on.pushes.length, 4);
      assert.deepEqual(off.pushes, []);
      assert.deepEqual({ ...off, pushes: [] }, { ...on, pushes: [] }, "same status, fields, body");
      // the access log has the page twice and the pushed requests once
      const log = accessLog().slice(before);
      assert.equal(log.filter((r) => r.uri === "/page?asset=x.css").length, 2);
      assert.equal(log.filter((r) => r.uri === "/style.css").length, 1);
    }
    // curl's HTTP/2 (nghttp2, which turns push off) and HTTP/1.1: the page, nothing pushed
    const before = accessLog().length;
    const ca = await Deno.makeTempFile({ suffix: ".pem" });
    try {
      await Deno.writeTextFile(ca, pki.caPem);
      assert.equal(await curl(`${https}/page`, "--cacert", ca, "--http2"), "<p>page</p> 2 200");
      assert.equal(await curl(`${https}/page`, "--cacert", ca, "--http1.1"), "<p>page</p> 1.1 200");
      assert.equal(await curl(`${h2c}/page`, "--http2-prior-knowledge"), "<p>page</p> 2 200");
      assert.equal(await curl(`${h2c}/page`, "--http1.1"), "<p>page</p> 1.1 200");
      assert.equal(
        await curl(`${https}/style.css`, "--cacert", ca, "--http2"),
        "asset /style.css 2 200",
      );
    } finally {
      await Deno.remove(ca);
    }
    const log = accessLog().slice(before);
    assert.deepEqual(log.map((r) => `${r.proto} ${r.uri}`), [
      "HTTP/2.0 /page",
      "HTTP/1.1 /page",
      "HTTP/2.0 /page",
      "HTTP/1.1 /page",
      "HTTP/2.0 /style.css",
    ]);
  },
});

/** A config with one server, for load checks. */
function config(server: Record<string, unknown>, tls = true): Record<string, unknown> {
  return {
    admin: { disabled: true },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: ["127.0.0.1:8443"],
            automatic_https: { disable: true },
            ...(tls ? { tls_connection_policies: [{}] } : {}),
            ...server,
          },
        },
      },
    },
  };
}

const pushing = (push: Record<string, unknown> = {}) => [
  { handle: [{ handler: "subroute", routes: [{ handle: [{ handler: "push", ...push }] }] }] },
];

Deno.test("push: its config is checked at load, and the deno engine with push is refused", async () => {
  await validateConfig(config({ routes: pushing() }));
  await validateConfig(config({ routes: pushing(), listener_engine: "node" }));
  // a server that cannot speak HTTP/2 has nothing to push on: either engine passes through
  await validateConfig(
    config({ routes: pushing(), listener_engine: "deno", protocols: ["h1"] }, false),
  );
  await validateConfig(
    config({ routes: pushing(), listener_engine: "deno", protocols: ["h1"] }),
  );
  const refused = async (server: Record<string, unknown>, re: RegExp) => {
    await assert.rejects(validateConfig(config(server)), (e: Error) => {
      assert.match(e.message, re);
      assert.equal(e.message.split("\n").length, 1, "one line");
      return true;
    });
  };
  // a plain server of the default protocols speaks h2c (as current Caddy): it may push too
  await assert.rejects(
    validateConfig(config({ routes: pushing(), listener_engine: "deno" }, false)),
    /listener_engine: "deno" \(Deno\.serve\) cannot push/,
  );
  await refused(
    { routes: pushing(), listener_engine: "deno" },
    /listener_engine: "deno" \(Deno\.serve\) cannot push \(HTTP\/2 server push, which the push handler in the routes does\); leave listener_engine unset or set "node"/,
  );
  await refused(
    { routes: pushing({ resources: [{ method: "POST", target: "/a" }] }) },
    /resources\[0\]\.method: must be GET or HEAD \(a pushed request has no body\), got POST/,
  );
  await refused(
    { routes: pushing({ resources: [{ method: "GET" }] }) },
    /resources\[0\]\.target: required/,
  );
  await refused(
    { routes: pushing({ resources: [{ target: "style.css" }] }) },
    /resources\[0\]\.target: must be an absolute path/,
  );
  await refused(
    { routes: pushing({ resources: [{ target: "//cdn.example/a.css" }] }) },
    /resources\[0\]\.target: must be an absolute path/,
  );
  await refused(
    { routes: pushing({ headers: { set: { Host: ["a"] } } }) },
    /headers\.set\.Host: a pushed request cannot carry this field/,
  );
  await refused(
    { routes: pushing({ headers: { add: { "Content-Length": ["1"] } } }) },
    /headers\.add\.Content-Length: a pushed request cannot carry this field/,
  );
  await refused({ routes: pushing({ bogus: 1 }) }, /http\.handlers\.push: unknown field "bogus"/);
  await refused(
    { routes: pushing({ resources: [{ target: "/a", when: 1 }] }) },
    /unknown field "when"/,
  );
});

Deno.test({
  name: "push: stop the server",
  sanitizeResources: false,
  fn: () => srv.stop(),
});
