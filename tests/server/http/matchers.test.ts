import assert from "node:assert/strict";
import { serve } from "./harness.ts";
import { raw } from "./raw.ts";

const respond = (body: string) => [{ handler: "static_response", body }];

/** One server with a terminal route per case; the body names the route that matched. */
function routes(cases: [string, Record<string, unknown>[]][]) {
  return [
    ...cases.map(([name, match]) => ({ match, handle: respond(name), terminal: true })),
    { handle: respond("none") },
  ];
}

async function hit(
  base: string,
  target: string,
  headers: Record<string, string> = {},
  method = "GET",
) {
  return (await raw(base, method, target, headers)).text;
}

Deno.test("host matcher: exact, case-insensitive, port ignored, wildcard label, placeholder", async () => {
  const srv = await serve(routes([
    ["exact", [{ host: ["example.com", "other.org"] }]],
    ["wild", [{ host: ["*.example.net"] }]],
    ["ph", [{ host: ["{http.request.header.X-Want}"] }]],
  ]));
  try {
    const b = srv.url();
    assert.equal(await hit(b, "/", { host: "EXAMPLE.com:9000" }), "exact");
    assert.equal(await hit(b, "/", { host: "other.org" }), "exact");
    assert.equal(await hit(b, "/", { host: "a.example.net" }), "wild");
    assert.equal(await hit(b, "/", { host: "a.b.example.net" }), "none");
    assert.equal(await hit(b, "/", { host: "example.net" }), "none");
    assert.equal(await hit(b, "/", { host: "dyn.test", "x-want": "dyn.test" }), "ph");
  } finally {
    await srv.stop();
  }
});

Deno.test("path matcher: exact, prefix, suffix, substring, glob, case, cleaning, escapes", async () => {
  const srv = await serve(routes([
    ["exact", [{ path: ["/exact"] }]],
    ["prefix", [{ path: ["/api/*"] }]],
    ["suffix", [{ path: ["*.php"] }]],
    ["sub", [{ path: ["*secret*"] }]],
    ["glob", [{ path: ["/img/*.png"] }]],
    ["escaped", [{ path: ["/enc/a%2Fb"] }]],
    ["slashes", [{ path: ["/double//slash"] }]],
  ]));
  try {
    const b = srv.url();
    assert.equal(await hit(b, "/exact"), "exact");
    assert.equal(await hit(b, "/EXACT"), "exact");
    assert.equal(await hit(b, "/exact/"), "none");
    assert.equal(await hit(b, "/api/v1/users"), "prefix");
    assert.equal(await hit(b, "/x/../api/v1"), "prefix");
    assert.equal(await hit(b, "//api//v1"), "prefix");
    assert.equal(await hit(b, "/index.PHP"), "suffix");
    assert.equal(await hit(b, "/index.php."), "suffix", "trailing dots are trimmed");
    assert.equal(await hit(b, "/a/my-secret-file"), "sub");
    assert.equal(await hit(b, "/img/a.png"), "glob");
    assert.equal(await hit(b, "/img/sub/a.png"), "none");
    assert.equal(await hit(b, "/enc/a%2Fb"), "escaped");
    assert.equal(await hit(b, "/enc/a/b"), "none");
    assert.equal(await hit(b, "/double//slash"), "slashes");
    assert.equal(await hit(b, "/%61pi/x"), "prefix", "decoded path matches");
  } finally {
    await srv.stop();
  }
});

Deno.test("path_regexp, header, header_regexp, query, method, protocol matchers", async () => {
  const srv = await serve([
    {
      match: [{ path_regexp: { name: "id", pattern: "^/users/(?P<uid>\\d+)$" } }],
      handle: respond("user {http.regexp.id.1} {http.regexp.id.uid}"),
      terminal: true,
    },
    ...routes([
      ["hdr", [{ header: { "X-Api": ["v1", "v2*"] } }]],
      ["hdr-present", [{ header: { "X-Present": [] } }]],
      ["hdr-absent", [{ header: { "X-Token": null }, path: ["/absent"] }]],
      ["hdr-sub", [{ header: { Accept: ["*json*"] } }]],
      ["hre", [{ header_regexp: { "User-Agent": { name: "ua", pattern: "^curl/(\\d+)" } } }]],
      ["query", [{ query: { q: ["go", "*"], page: ["2"] } }]],
      ["put", [{ method: ["PUT", "DELETE"] }]],
      ["http", [{ protocol: "http", path: ["/proto"] }]],
    ]).slice(0, -1),
    {
      match: [{ header_regexp: { "X-Ver": { name: "v", pattern: "(\\d+)" } } }],
      handle: respond("ver={http.regexp.v.1}"),
      terminal: true,
    },
    { handle: respond("none") },
  ]);
  try {
    const b = srv.url();
    assert.equal(await hit(b, "/users/42"), "user 42 42");
    assert.equal(await hit(b, "/users/x"), "none");
    assert.equal(await hit(b, "/", { "x-api": "v1" }), "hdr");
    assert.equal(await hit(b, "/", { "x-api": "v2beta" }), "hdr");
    assert.equal(await hit(b, "/", { "x-api": "v3" }), "none");
    assert.equal(await hit(b, "/", { "x-present": "" }), "hdr-present");
    assert.equal(await hit(b, "/absent"), "hdr-absent");
    assert.equal(await hit(b, "/absent", { "x-token": "t" }), "none");
    assert.equal(await hit(b, "/", { accept: "application/json" }), "hdr-sub");
    assert.equal(await hit(b, "/", { "user-agent": "curl/8.1" }), "hre");
    assert.equal(await hit(b, "/?q=anything"), "query");
    assert.equal(await hit(b, "/?page=2"), "query");
    assert.equal(await hit(b, "/?page=3"), "none");
    assert.equal(await hit(b, "/", {}, "PUT"), "put");
    assert.equal(await hit(b, "/", {}, "DELETE"), "put");
    assert.equal(await hit(b, "/proto"), "http");
    assert.equal(await hit(b, "/", { "x-ver": "abc 17" }), "ver=17");
  } finally {
    await srv.stop();
  }
});

Deno.test("remote_ip, client_ip with trusted_proxies, not, vars, vars_regexp matchers", async () => {
  const srv = await serve([
    { handle: [{ handler: "vars", tier: "gold", count: 3 }] },
    ...routes([
      ["not-remote", [{ path: ["/r"], not: [{ remote_ip: { ranges: ["127.0.0.0/8"] } }] }]],
      ["remote", [{ path: ["/r"], remote_ip: { ranges: ["10.0.0.0/8", "127.0.0.1"] } }]],
      ["client-private", [{ path: ["/c"], client_ip: { ranges: ["192.168.0.0/16"] } }]],
      ["client-other", [{ path: ["/c"] }]],
      ["vars", [{ path: ["/v"], vars: { tier: ["silver", "gold"] } }]],
      ["vars-ph", [{ path: ["/p"], vars: { "{http.request.method}": ["POST"] } }]],
      ["vars-re", [{ path: ["/re"], vars_regexp: { tier: { name: "t", pattern: "^g(.)" } } }]],
    ]),
  ], { trusted_proxies: { source: "static", ranges: ["127.0.0.1/32"] } });
  try {
    const b = srv.url();
    assert.equal(await hit(b, "/r"), "remote");
    assert.equal(
      await hit(b, "/c", { "x-forwarded-for": "192.168.1.9, 10.0.0.1" }),
      "client-private",
    );
    assert.equal(await hit(b, "/c", { "x-forwarded-for": "8.8.8.8" }), "client-other");
    assert.equal(await hit(b, "/c"), "client-other");
    assert.equal(await hit(b, "/v"), "vars");
    assert.equal(await hit(b, "/p", {}, "POST"), "vars-ph");
    assert.equal(await hit(b, "/p"), "none");
    assert.equal(await hit(b, "/re"), "vars-re");
  } finally {
    await srv.stop();
  }
});

Deno.test("matcher sets are OR'ed, matchers in a set AND'ed; group and terminal", async () => {
  const srv = await serve([
    { group: "g", match: [{ path: ["/a"] }], handle: [{ handler: "vars", first: "a" }] },
    { group: "g", handle: [{ handler: "vars", first: "fallback" }] },
    {
      match: [{ path: ["/x"], method: ["POST"] }, { path: ["/y"] }],
      handle: respond("matched {http.vars.first}"),
      terminal: true,
    },
    { handle: respond("end {http.vars.first}") },
  ]);
  try {
    const b = srv.url();
    assert.equal(await hit(b, "/x", {}, "POST"), "matched fallback");
    assert.equal(await hit(b, "/x"), "end fallback");
    assert.equal(await hit(b, "/y"), "matched fallback");
    assert.equal(await hit(b, "/a"), "end a");
  } finally {
    await srv.stop();
  }
});

Deno.test("expression matcher: placeholders, operators, string methods and matcher functions", async () => {
  const srv = await serve(routes([
    ["ph", [{
      expression: "{http.request.uri.path}.startsWith('/ph') && {http.request.method} == 'GET'",
    }]],
    ["in", [{
      expression:
        "{http.request.header.X-Role} in ['admin', 'root'] || {http.request.uri.query.k}.size() > 3",
    }]],
    ["fn", [{ expression: "path('/fn/*') && !method('POST') && header({'X-A': 'b*'})" }]],
    ["re", [{
      expression: { expr: "path_regexp('id', '^/re/(\\\\d+)$') && query({'q': ['x', 'y']})" },
    }]],
    ["math", [{
      expression:
        "({http.request.uri.path} + '!').endsWith('/math!') && 2 + 2 >= 4 && 'Abc'.lowerAscii() == 'abc'",
    }]],
    ["ip", [{
      expression:
        "remote_ip('127.0.0.0/8') && {http.request.uri.path}.matches('^/ip$') && protocol('http')",
    }]],
  ]));
  try {
    const b = srv.url();
    assert.equal(await hit(b, "/ph/x"), "ph");
    assert.equal(await hit(b, "/ph/x", {}, "PUT"), "none");
    assert.equal(await hit(b, "/x", { "x-role": "root" }), "in");
    assert.equal(await hit(b, "/x?k=long"), "in");
    assert.equal(await hit(b, "/x?k=ab"), "none");
    assert.equal(await hit(b, "/fn/1", { "x-a": "bee" }), "fn");
    assert.equal(await hit(b, "/fn/1", { "x-a": "bee" }, "POST"), "none");
    assert.equal(await hit(b, "/re/12?q=y"), "re");
    assert.equal(await hit(b, "/re/12?q=z"), "none");
    assert.equal(await hit(b, "/math"), "math");
    assert.equal(await hit(b, "/ip"), "ip");
  } finally {
    await srv.stop();
  }
});
