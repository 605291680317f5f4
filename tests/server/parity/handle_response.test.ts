/**
 * `reverse_proxy` `handle_response` (status-only and routes, `copy_response`,
 * `copy_response_headers`, the forward-auth flow), `rewrite` of the upstream request and
 * `intercept`, each rewriting real upstream answers on loopback; the proxy cases side by side
 * with Caddy 2.6.2.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { caddyInstalled, startCaddy } from "./oracle.ts";
import { startUpstream } from "./upstream_fixture.ts";

const respond = (body: string, status?: number) => ({
  handler: "static_response",
  body,
  ...(status ? { status_code: status } : {}),
});

function proxyConfig(auth: string, app: string): Record<string, unknown> {
  const route = (path: string, handle: unknown[]) => ({
    match: [{ path: [path] }],
    handle,
    terminal: true,
  });
  return {
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          // upstream 5xx become a friendly page, 404 becomes 410 with the upstream body
          route("/status/*", [{
            handler: "reverse_proxy",
            upstreams: [{ dial: app }],
            handle_response: [
              { match: { status_code: [404] }, status_code: 410 },
              {
                match: { status_code: [5] },
                routes: [{
                  handle: [respond(
                    "sorry: upstream said {http.reverse_proxy.status_code} " +
                      "({http.reverse_proxy.header.X-Upstream-Status})",
                    503,
                  )],
                }],
              },
            ],
          }]),
          // copy_response with a new status
          route("/copy/*", [{
            handler: "reverse_proxy",
            upstreams: [{ dial: app }],
            rewrite: { uri: "/status/418" },
            handle_response: [{
              routes: [{ handle: [{ handler: "copy_response", status_code: 202 }] }],
            }],
          }]),
          // copy_response_headers with include, then an answer of our own
          route("/copyheaders/*", [{
            handler: "reverse_proxy",
            upstreams: [{ dial: app }],
            rewrite: { uri: "/status/418" },
            handle_response: [{
              routes: [{
                handle: [
                  { handler: "copy_response_headers", include: ["X-Upstream-Status"] },
                  respond("ours"),
                ],
              }],
            }],
          }]),
          // the forward-auth flow: ask the auth upstream, copy a header on 2xx, go on
          route("/app/*", [
            {
              handler: "reverse_proxy",
              upstreams: [{ dial: auth }],
              rewrite: { method: "GET", uri: "/auth/{http.request.uri.query.user}" },
              headers: {
                request: { set: { "X-Forwarded-Method": ["{http.request.method}"] } },
              },
              handle_response: [{
                match: { status_code: [2] },
                routes: [{
                  handle: [{
                    handler: "headers",
                    request: {
                      set: { "Remote-User": ["{http.reverse_proxy.header.Remote-User}"] },
                    },
                  }],
                }],
              }],
            },
            { handler: "reverse_proxy", upstreams: [{ dial: app }] },
          ]),
          // rewrite changes only the upstream request
          route("/rw/*", [
            {
              handler: "reverse_proxy",
              upstreams: [{ dial: app }],
              rewrite: { method: "PUT", uri: "/rewritten?uri={http.request.uri}" },
            },
          ]),
        ],
      },
    },
  };
}

type Case = [method: string, target: string, body?: string];

const CASES: Case[] = [
  ["GET", "/status/200"],
  ["GET", "/status/404"],
  ["GET", "/status/502"],
  ["GET", "/copy/x"],
  ["GET", "/copyheaders/x"],
  ["GET", "/app/page?user=ok"],
  ["POST", "/app/page?user=ok", "payload"],
  ["GET", "/app/page?user=deny"],
  ["POST", "/rw/a?b=1", "sent"],
];

async function run(base: string, [method, target, body]: Case) {
  const headers: Record<string, string> = body ? { "content-type": "text/plain" } : {};
  const r = await raw(base, method, target, headers, body);
  let text = r.text;
  try {
    // the echo's volatile parts (ports, forwarded-for of the proxy) are left out
    const j = JSON.parse(text);
    text = JSON.stringify({
      method: j.method,
      uri: j.uri,
      body: j.body,
      remote_user: j.headers["remote-user"],
      fwd_method: j.headers["x-forwarded-method"],
    });
  } catch { /* not an echo */ }
  return {
    status: r.status,
    text,
    upstreamStatus: r.headers.get("x-upstream-status"),
    upstream: r.headers.get("x-upstream"),
  };
}

Deno.test("handle_response: status changes, routes, copy_response(_headers), forward auth, rewrite", async () => {
  const auth = startUpstream("auth");
  const app = startUpstream("app");
  const srv = await startHttp(proxyConfig(auth.dial, app.dial));
  try {
    const r = (c: Case) => run(srv.url(), c);
    assert.deepEqual(await r(CASES[0]), {
      status: 200,
      text: "upstream says 200",
      upstreamStatus: "200",
      upstream: "app",
    });
    const gone = await r(CASES[1]);
    assert.equal(gone.status, 410, "status_code only: same body, new status");
    assert.equal(gone.text, "upstream says 404");
    const sorry = await r(CASES[2]);
    assert.equal(sorry.status, 503);
    assert.equal(sorry.text, "sorry: upstream said 502 (502)");
    assert.equal(sorry.upstream, null, "the upstream response is not sent");
    const copied = await r(CASES[3]);
    assert.equal(copied.status, 202);
    assert.equal(copied.text, "upstream says 418");
    assert.equal(copied.upstreamStatus, "418");
    assert.deepEqual(await r(["GET", "/copyheaders/x"]), {
      status: 200,
      text: "ours",
      upstreamStatus: "418",
      upstream: null,
    });

    const ok = await r(CASES[5]);
    assert.equal(ok.status, 200);
    assert.deepEqual(JSON.parse(ok.text), {
      method: "GET",
      uri: "/app/page?user=ok",
      body: "",
      remote_user: "ann",
    });
    assert.equal(auth.seen.at(-1)!.uri, "/auth/ok?user=ok", "a rewrite without a query keeps it");
    assert.equal(auth.seen.at(-1)!.headers["x-forwarded-method"], "GET");
    const posted = await r(CASES[6]);
    assert.equal(JSON.parse(posted.text).body, "payload", "the body still reaches the app");
    assert.equal(auth.seen.at(-1)!.method, "GET", "rewritten to GET: no body to the auth upstream");
    assert.equal(auth.seen.at(-1)!.body, "");
    const denied = await r(CASES[7]);
    assert.equal(denied.status, 401, "an unmatched answer goes out as is");
    assert.equal(denied.text, "go away");

    const rw = await r(CASES[8]);
    assert.deepEqual(JSON.parse(rw.text), {
      method: "PUT",
      uri: "/rewritten?uri=%2Frw%2Fa%3Fb%3D1",
      body: "sent",
    });
  } finally {
    await srv.stop();
    await auth.stop();
    await app.stop();
  }
});

Deno.test({
  name: "handle_response and rewrite: the same answers as Caddy 2.6.2",
  ignore: !caddyInstalled(),
  async fn() {
    const auth = startUpstream("auth");
    const app = startUpstream("app");
    const cfg = proxyConfig(auth.dial, app.dial);
    const srv = await startHttp(cfg);
    const caddy = await startCaddy(cfg);
    try {
      for (const c of CASES) {
        assert.deepEqual(await run(srv.url(), c), await run(caddy.url, c), c.join(" "));
      }
    } finally {
      await caddy.stop();
      await srv.stop();
      await auth.stop();
      await app.stop();
    }
  },
});

Deno.test("intercept: replaces statuses and answers of upstream errors, keeps the rest", async () => {
  const app = startUpstream("app");
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ path: ["/files/*"] }],
            handle: [respond("the secret file")],
            terminal: true,
          },
          {
            handle: [
              {
                handler: "intercept",
                handle_response: [
                  { match: { status_code: [500] }, status_code: 400 },
                  {
                    match: { headers: { "X-Accel-Redirect": ["*"] } },
                    routes: [{
                      handle: [
                        { handler: "rewrite", uri: "{http.intercept.header.X-Accel-Redirect}" },
                        { handler: "invoke", name: "files" },
                      ],
                    }],
                  },
                  {
                    match: { status_code: [502, 503] },
                    routes: [{
                      handle: [respond("maintenance ({http.intercept.status_code})", 503)],
                    }],
                  },
                  // routes that answer nothing: the original goes out
                  {
                    match: { status_code: [418] },
                    routes: [{ handle: [{ handler: "vars", x: "1" }] }],
                  },
                  // an answer without a body keeps the original body
                  {
                    match: { status_code: [409] },
                    routes: [{ handle: [{ handler: "static_response", status_code: 422 }] }],
                  },
                ],
              },
              { handler: "reverse_proxy", upstreams: [{ dial: app.dial }] },
            ],
          },
        ],
        named_routes: { files: { handle: [respond("the secret file")] } },
      },
    },
  });
  try {
    const get = (t: string) => raw(srv.url(), "GET", t);
    let r = await get("/status/500");
    assert.equal(r.status, 400);
    assert.equal(r.text, "upstream says 500");
    r = await get("/accel");
    assert.equal(r.status, 200);
    assert.equal(r.text, "the secret file");
    assert.equal(r.headers.get("x-upstream"), "app", "over the original header fields");
    r = await get("/status/502");
    assert.equal(r.status, 503);
    assert.equal(r.text, "maintenance (502)");
    r = await get("/status/418");
    assert.equal(r.status, 418);
    assert.equal(r.text, "upstream says 418");
    r = await get("/status/409");
    assert.equal(r.status, 422);
    assert.equal(r.text, "upstream says 409");
    r = await get("/status/201");
    assert.equal(r.status, 201, "unmatched: untouched");
    assert.equal(r.text, "upstream says 201");
  } finally {
    await srv.stop();
    await app.stop();
  }
});
