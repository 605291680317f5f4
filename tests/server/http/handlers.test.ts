import assert from "node:assert/strict";
import bcrypt from "bcryptjs";
import zlib from "node:zlib";
import { serve, startHttp } from "./harness.ts";
import { raw } from "./raw.ts";

const respond = (body: string, extra: Record<string, unknown> = {}) => ({
  handler: "static_response",
  body,
  ...extra,
});

Deno.test("static_response: status (number and placeholder), headers, JSON type, close, abort", async () => {
  const srv = await serve([
    {
      match: [{ path: ["/teapot"] }],
      handle: [respond("short and stout", { status_code: 418 })],
      terminal: true,
    },
    {
      match: [{ path: ["/ph"] }],
      handle: [respond("", { status_code: "{http.request.header.X-Code}" })],
      terminal: true,
    },
    {
      match: [{ path: ["/hdr"] }],
      handle: [respond("host={http.request.host} {unknown.ph}", {
        headers: {
          "X-One": ["a", "b"],
          "Content-Type": ["text/x-custom"],
          "X-Path": ["{http.request.uri.path}"],
        },
      })],
      terminal: true,
    },
    { match: [{ path: ["/json"] }], handle: [respond(' {"a": [1, 2]} ')], terminal: true },
    { match: [{ path: ["/close"] }], handle: [respond("bye", { close: true })], terminal: true },
    { match: [{ path: ["/abort"] }], handle: [respond("never", { abort: true })], terminal: true },
  ]);
  try {
    const b = srv.url();
    let r = await raw(b, "GET", "/teapot");
    assert.equal(r.status, 418);
    assert.equal(r.text, "short and stout");
    r = await raw(b, "GET", "/ph", { "x-code": "202" });
    assert.equal(r.status, 202);
    assert.equal(r.headers.get("content-type"), null, "no body, no content type");
    r = await raw(b, "GET", "/hdr", { host: "site.test:8080" });
    assert.equal(r.headers.get("x-one"), "a, b");
    assert.equal(r.headers.get("content-type"), "text/x-custom");
    assert.equal(r.headers.get("x-path"), "/hdr");
    assert.equal(r.text, "host=site.test {unknown.ph}", "unknown placeholders stay in bodies");
    r = await raw(b, "GET", "/json");
    assert.equal(r.headers.get("content-type"), "application/json");
    r = await raw(b, "GET", "/close", { connection: "keep-alive" });
    assert.equal(r.headers.get("connection"), "close");
    r = await raw(b, "GET", "/abort");
    assert.notEqual(r.text, "never");
  } finally {
    await srv.stop();
  }
});

Deno.test("headers: request and response set/add/delete/replace, deferred, require, Server removal", async () => {
  const srv = await serve([
    {
      handle: [{
        handler: "headers",
        request: {
          set: { "X-Set": ["set-{http.request.method}"] },
          add: { "X-Add": ["one"] },
          delete: ["X-Drop", "X-Wild-*"],
          replace: {
            "User-Agent": [{ search: "curl", replace: "CURL" }, {
              search_regexp: "(\\d+)",
              replace: "v${1}",
            }],
          },
        },
        response: { set: { "X-Resp": ["r"] }, add: { "X-Multi": ["1", "2"] } },
      }],
    },
    {
      match: [{ path: ["/deferred"] }],
      handle: [
        {
          handler: "headers",
          response: {
            deferred: true,
            delete: ["Server", "X-From-Handler"],
            set: { "X-After": ["yes"] },
          },
        },
        respond("d", { headers: { "X-From-Handler": ["x"] } }),
      ],
      terminal: true,
    },
    {
      match: [{ path: ["/require"] }],
      handle: [
        {
          handler: "headers",
          response: { require: { status_code: [4] }, set: { "X-Error-Only": ["1"] } },
        },
        respond("nope", { status_code: "{http.request.header.X-Code}" }),
      ],
      terminal: true,
    },
    {
      handle: [respond(
        "set={http.request.header.X-Set} add={http.request.header.X-Add} drop={http.request.header.X-Drop} wild={http.request.header.X-Wild-A} ua={http.request.header.User-Agent}",
      )],
    },
  ]);
  try {
    const b = srv.url();
    let r = await raw(b, "GET", "/", {
      "x-drop": "gone",
      "x-wild-a": "gone",
      "user-agent": "curl/8",
    });
    assert.equal(r.text, "set=set-GET add=one drop= wild= ua=CURL/v8");
    assert.equal(r.headers.get("x-resp"), "r");
    assert.equal(r.headers.get("x-multi"), "1, 2");
    r = await raw(b, "GET", "/deferred");
    assert.equal(r.headers.get("server"), null);
    assert.equal(r.headers.get("x-from-handler"), null);
    assert.equal(r.headers.get("x-after"), "yes");
    r = await raw(b, "GET", "/require", { "x-code": "404" });
    assert.equal(r.headers.get("x-error-only"), "1");
    r = await raw(b, "GET", "/require", { "x-code": "200" });
    assert.equal(r.headers.get("x-error-only"), null);
  } finally {
    await srv.stop();
  }
});

Deno.test("rewrite: method, uri with query, strip prefix/suffix, uri_substring, path_regexp, query ops", async () => {
  const echo = respond("{http.request.method} {http.request.uri} orig={http.request.orig_uri}");
  const srv = await serve([
    {
      match: [{ path: ["/m"] }],
      handle: [{ handler: "rewrite", method: "post" }, echo],
      terminal: true,
    },
    {
      match: [{ path: ["/u"] }],
      handle: [{
        handler: "rewrite",
        uri: "/new/{http.request.uri.path.0}?x={http.request.header.X-Q}&{http.request.uri.query}",
      }, echo],
      terminal: true,
    },
    {
      match: [{ path: ["/api/*"] }],
      handle: [{ handler: "rewrite", strip_path_prefix: "/API" }, echo],
      terminal: true,
    },
    {
      match: [{ path: ["*.html"] }],
      handle: [{ handler: "rewrite", strip_path_suffix: ".html" }, echo],
      terminal: true,
    },
    {
      match: [{ path: ["/sub/*"] }],
      handle: [
        { handler: "rewrite", uri_substring: [{ find: "foo", replace: "bar", limit: 1 }] },
        echo,
      ],
      terminal: true,
    },
    {
      match: [{ path: ["/re/*"] }],
      handle: [
        { handler: "rewrite", path_regexp: [{ find: "/re/(\\d+)", replace: "/num/${1}" }] },
        echo,
      ],
      terminal: true,
    },
    {
      match: [{ path: ["/q"] }],
      handle: [{
        handler: "rewrite",
        query: {
          rename: [{ key: "old", val: "new" }],
          set: [{ key: "s", val: "{http.request.method}" }],
          add: [{ key: "a", val: "2" }],
          replace: [{ key: "r", search_regexp: "\\d", replace: "N" }],
          delete: ["d"],
        },
      }, echo],
      terminal: true,
    },
  ]);
  try {
    const b = srv.url();
    const t = async (target: string) => (await raw(b, "GET", target)).text;
    assert.equal(await t("/m"), "POST /m orig=/m");
    assert.equal(
      (await raw(b, "GET", "/u?k=v", { "x-q": "a b&c" })).text,
      "GET /new/u?x=a+b%26c&k=v orig=/u?k=v",
    );
    assert.equal(await t("/api/users?id=1"), "GET /users?id=1 orig=/api/users?id=1");
    assert.equal(await t("/page.html"), "GET /page orig=/page.html");
    assert.equal(await t("/sub/foo/foo"), "GET /sub/bar/foo orig=/sub/foo/foo");
    assert.equal(await t("/re/42"), "GET /num/42 orig=/re/42");
    assert.equal(
      await t("/q?old=1&r=a1b2&d=x&a=1"),
      "GET /q?a=1&a=2&new=1&r=aNbN&s=GET orig=/q?old=1&r=a1b2&d=x&a=1",
    );
  } finally {
    await srv.stop();
  }
});

Deno.test("vars, map and error handlers with errors routes and {http.error.*}", async () => {
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          { handle: [{ handler: "vars", root: "/srv", n: 7 }] },
          {
            handle: [{
              handler: "map",
              source: "{http.request.uri.path}",
              destinations: ["{kind}", "{label}"],
              mappings: [
                { input: "/a", outputs: ["exact", "A"] },
                { input_regexp: "^/user/(\\w+)$", outputs: ["user", "u-${1}"] },
              ],
              defaults: ["other", "none"],
            }],
          },
          {
            match: [{ path: ["/fail"] }],
            handle: [{
              handler: "error",
              error: "broke {http.request.uri.path}",
              status_code: 503,
            }],
          },
          { match: [{ path: ["/fail500"] }], handle: [{ handler: "error", error: "plain" }] },
          { handle: [respond("{kind} {label} {http.vars.root} {http.vars.n}")] },
        ],
        errors: {
          routes: [
            {
              match: [{ path: ["/fail"] }],
              handle: [
                respond(
                  "{http.error.status_code} {http.error.status_text} {http.error.message} id={http.error.id}",
                  {
                    status_code: "{http.error.status_code}",
                  },
                ),
              ],
            },
          ],
        },
      },
    },
  });
  try {
    const b = srv.url();
    assert.equal((await raw(b, "GET", "/a")).text, "exact A /srv 7");
    assert.equal((await raw(b, "GET", "/user/bob")).text, "user u-bob /srv 7");
    assert.equal((await raw(b, "GET", "/zzz")).text, "other none /srv 7");
    const r = await raw(b, "GET", "/fail");
    assert.equal(r.status, 503);
    assert.match(r.text, /^503 Service Unavailable broke \/fail id=[a-z0-9]{9}$/);
    const r2 = await raw(b, "GET", "/fail500");
    assert.equal(r2.status, 500, "no matching error route: bare status");
    assert.equal(r2.text, "");
  } finally {
    await srv.stop();
  }
});

Deno.test("authentication http_basic: bcrypt (raw and base64), 401 challenge, user id", async () => {
  const hash = bcrypt.hashSync("s3cret", 4);
  const srv = await serve([
    {
      handle: [
        {
          handler: "authentication",
          providers: {
            http_basic: {
              realm: "staff",
              hash: { algorithm: "bcrypt" },
              accounts: [{ username: "ann", password: hash }, {
                username: "bob",
                password: btoa(hash),
              }],
            },
          },
        },
        respond("hello {http.auth.user.id}"),
      ],
    },
  ]);
  try {
    const b = srv.url();
    let r = await raw(b, "GET", "/");
    assert.equal(r.status, 401);
    assert.equal(r.headers.get("www-authenticate"), 'Basic realm="staff"');
    r = await raw(b, "GET", "/", { authorization: "Basic " + btoa("ann:wrong") });
    assert.equal(r.status, 401);
    r = await raw(b, "GET", "/", { authorization: "Basic " + btoa("nobody:s3cret") });
    assert.equal(r.status, 401);
    r = await raw(b, "GET", "/", { authorization: "Basic " + btoa("ann:s3cret") });
    assert.equal(r.text, "hello ann");
    r = await raw(b, "GET", "/", { authorization: "Basic " + btoa("bob:s3cret") });
    assert.equal(r.text, "hello bob");
  } finally {
    await srv.stop();
  }
});

Deno.test("request_body max_size: 413 on declared and streamed bodies", async () => {
  const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    return new Response(`got ${(await req.arrayBuffer()).byteLength}`);
  });
  const srv = await serve([
    {
      handle: [
        { handler: "request_body", max_size: 10 },
        { handler: "reverse_proxy", upstreams: [{ dial: `127.0.0.1:${upstream.addr.port}` }] },
      ],
    },
  ]);
  try {
    const b = srv.url();
    let r = await raw(b, "POST", "/", {}, "0123456789ABC");
    assert.equal(r.status, 413);
    r = await raw(b, "POST", "/", {}, "0123");
    assert.equal(r.text, "got 4");
    const res = await fetch(b, {
      method: "POST",
      body: new ReadableStream({
        start(c) {
          c.enqueue(new Uint8Array(8));
          c.enqueue(new Uint8Array(8));
          c.close();
        },
      }),
    });
    assert.equal(res.status, 413);
    await res.body?.cancel();
  } finally {
    await srv.stop();
    await upstream.shutdown();
  }
});

Deno.test("encode: gzip and zstd by preference and q, minimum_length, content-type filter, Vary", async () => {
  const big = "hello compression ".repeat(100);
  const srv = await serve([
    {
      handle: [{
        handler: "encode",
        encodings: { gzip: {}, zstd: {} },
        prefer: ["zstd", "gzip"],
        minimum_length: 256,
      }],
    },
    { match: [{ path: ["/small"] }], handle: [respond("tiny")], terminal: true },
    {
      match: [{ path: ["/bin"] }],
      handle: [respond(big, { headers: { "Content-Type": ["image/png"] } })],
      terminal: true,
    },
    { handle: [respond(big)] },
  ]);
  try {
    const b = srv.url();
    let r = await raw(b, "GET", "/", { "accept-encoding": "gzip" });
    assert.equal(r.headers.get("content-encoding"), "gzip");
    assert.equal(r.headers.get("vary"), "Accept-Encoding");
    assert.equal(new TextDecoder().decode(zlib.gunzipSync(r.body)), big);
    r = await raw(b, "GET", "/", { "accept-encoding": "gzip, zstd" });
    assert.equal(r.headers.get("content-encoding"), "zstd");
    assert.equal(new TextDecoder().decode(zlib.zstdDecompressSync(r.body)), big);
    r = await raw(b, "GET", "/", { "accept-encoding": "zstd;q=0.5, gzip" });
    assert.equal(r.headers.get("content-encoding"), "gzip");
    r = await raw(b, "GET", "/", { "accept-encoding": "br" });
    assert.equal(r.headers.get("content-encoding"), null);
    r = await raw(b, "GET", "/small", { "accept-encoding": "gzip" });
    assert.equal(r.headers.get("content-encoding"), null);
    assert.equal(r.text, "tiny");
    r = await raw(b, "GET", "/bin", { "accept-encoding": "gzip" });
    assert.equal(r.headers.get("content-encoding"), null);
  } finally {
    await srv.stop();
  }
});

Deno.test("subroute with its own errors; placeholders: env, uri parts, labels, query, cookie", async () => {
  Deno.env.set("GATEHOUSE_TEST_ENV", "envval");
  const srv = await serve([
    {
      match: [{ path: ["/sub/*"] }],
      handle: [{
        handler: "subroute",
        routes: [
          {
            match: [{ path: ["/sub/boom"] }],
            handle: [{ handler: "error", status_code: 409, error: "conflict" }],
          },
          { handle: [respond("in subroute")], terminal: true },
        ],
        errors: {
          routes: [{
            handle: [respond("sub caught {http.error.status_code}", { status_code: 299 })],
          }],
        },
      }],
    },
    {
      handle: [respond(
        "{env.GATEHOUSE_TEST_ENV}|{http.request.uri.path.1}|{http.request.host.labels.1}|{http.request.uri.query.k}|{http.request.cookie.c}|{http.request.uri.path.file.ext}|{http.request.uri.path.dir}|{http.request.port}",
      )],
    },
  ]);
  try {
    const b = srv.url();
    assert.equal((await raw(b, "GET", "/sub/x")).text, "in subroute");
    const r = await raw(b, "GET", "/sub/boom");
    assert.equal(r.status, 299);
    assert.equal(r.text, "sub caught 409");
    assert.equal(
      (await raw(b, "GET", "/a/b/f.txt?k=v", { host: "www.example.com:81", cookie: "x=1; c=cv" }))
        .text,
      "envval|b|example|v|cv|.txt|/a/b/|81",
    );
  } finally {
    await srv.stop();
  }
});
