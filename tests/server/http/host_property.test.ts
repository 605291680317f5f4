/**
 * Properties of request hosts and targets: `validHost` accepts exactly the documented grammar;
 * through a real `gatehouse run` process (both listener engines), any Host and any request
 * target get a 4xx or a routed answer, never a 5xx or no answer, and what reaches an upstream
 * has a well-formed request line and exactly one valid Host.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { requestURL, splitAbsoluteTarget, validHost } from "../../../lib/server/net/host.ts";
import { HostileUpstream, readAnswer, startGatehouse } from "./hostile.ts";

const labelArb = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
const nameArb = fc.array(labelArb, { minLength: 1, maxLength: 4 }).map((l) => l.join("."));
const portArb = fc.integer({ min: 1, max: 65535 });
/** Ports no client can name: 0 (however spelled) and past 65535. */
const badPortArb = fc.oneof(
  fc.constantFrom("0", "00", "00000"),
  fc.integer({ min: 65536, max: 99999 }).map(String),
);
const v6Arb = fc.ipV6();
const goodHostArb = fc.oneof(
  nameArb,
  fc.tuple(nameArb, portArb).map(([n, p]) => `${n}:${p}`),
  fc.ipV4(),
  v6Arb.map((a) => `[${a}]`),
  fc.tuple(v6Arb, portArb).map(([a, p]) => `[${a}]:${p}`),
);
/** Characters that never belong in a host. */
const BAD = [..."/?#@ \t\x00\x01\x7f%,;=!$&'()*+\"<>\\^`{|}\xe9"];
const badHostArb = fc.oneof(
  fc.tuple(goodHostArb, fc.nat(), fc.constantFrom(...BAD)).map(
    ([h, at, ch]) => h.slice(0, at % (h.length + 1)) + ch + h.slice(at % (h.length + 1)),
  ),
  fc.tuple(fc.oneof(nameArb, fc.ipV4(), v6Arb.map((a) => `[${a}]`)), badPortArb)
    .map(([h, p]) => `${h}:${p}`),
);
/** Hosts of every kind, without CR or LF (which would end the field line). */
const anyHostArb = fc.oneof(
  { arbitrary: goodHostArb, weight: 3 },
  badHostArb,
  fc.string({ maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, "")),
);
const segmentArb = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9._~-]{0,8}$/),
  fc.constantFrom("..", ".", "%2e%2e", "%2F", "%00", "%zz", "\\", "a b", "%", "?", "#", "\xe9"),
);
const targetArb = fc.oneof(
  fc.array(segmentArb, { maxLength: 5 }).map((s) => "/" + s.join("/")),
  fc.tuple(fc.constantFrom("http://", "https://", "HTTP://", "ftp://", "//"), anyHostArb)
    .chain(([scheme, h]) =>
      fc.array(segmentArb, { maxLength: 3 }).map((s) => `${scheme}${h}/${s.join("/")}`)
    ),
  fc.constantFrom("*", "", "x", "/p/x?q=%0d%0a"),
);

Deno.test("validHost: generated valid hosts pass; any forbidden character or port outside 1-65535 fails", () => {
  fc.assert(
    fc.property(goodHostArb, (h) => assert.ok(validHost(h), h)),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(badHostArb, (h) => assert.ok(!validHost(h), JSON.stringify(h))),
    { numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (s) => {
      if (validHost(s)) assert.match(s, /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(:[0-9]{1,5})?$/);
    }),
    { numRuns: 5000 },
  );
  for (const bad of ["", ":1", "a:", "a:65536", "a:123456", "[::1", "[]", "[1.2.3.4]", "[::1]x"]) {
    assert.ok(!validHost(bad), bad);
  }
});

Deno.test("splitAbsoluteTarget: the authority never holds / ? #, the rest is a path", () => {
  fc.assert(
    fc.property(targetArb, (t) => {
      const s = splitAbsoluteTarget(t);
      if (s === null) return;
      assert.doesNotMatch(s.authority, /[/?#]/);
      assert.ok(s.rest.startsWith("/"));
    }),
    { numRuns: 3000 },
  );
});

Deno.test("requestURL (node engine): absolute form wins, Host checked, one Host only", () => {
  const fb = "127.0.0.1:80";
  assert.deepEqual(requestURL("http://a.example:81/x?y", ["b.example"], "http", fb), {
    url: "http://a.example:81/x?y",
    host: "a.example:81",
  });
  assert.deepEqual(requestURL("HTTPS://a.example", [], "http", fb), {
    url: "http://a.example/",
    host: "a.example",
  });
  assert.deepEqual(requestURL("/x", ["b.example"], "https", fb), {
    url: "https://b.example/x",
    host: null,
  });
  assert.deepEqual(requestURL("/x", [""], "http", fb), {
    url: "http://127.0.0.1:80/x",
    host: null,
  });
  for (
    const [target, hosts] of [
      ["/x", ["a.example", "a.example"]],
      ["/x", ["a.example/x"]],
      ["http://u@a.example/", ["b.example"]],
      ["ftp://a.example/", ["b.example"]],
      ["http://a.example/", ["b example"]],
      ["http://:80/", []],
    ] as [string, string[]][]
  ) {
    assert.equal(requestURL(target, hosts, "http", fb), null, `${target} ${hosts}`);
  }
  fc.assert(
    fc.property(targetArb, fc.array(anyHostArb, { maxLength: 2 }), (t, hosts) => {
      const r = requestURL(t, hosts, "http", fb);
      if (r === null) return;
      const u = r.url.slice("http://".length);
      const authority = u.slice(0, u.search(/[/?#]|$/));
      assert.ok(validHost(authority), JSON.stringify({ t, hosts, r }));
    }),
    { numRuns: 3000 },
  );
});

function latin1(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
}

for (const engine of ["deno", "node"] as const) {
  Deno.test(`request hosts and targets through a process (${engine}): 4xx or routed, never 5xx`, async () => {
    const up = new HostileUpstream({}, undefined, true);
    const g = await startGatehouse({
      main: {
        listener_engine: engine,
        routes: [
          {
            match: [{ path: ["/p/*"] }],
            handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up.dial }] }],
            terminal: true,
          },
          { handle: [{ handler: "static_response", body: "host={http.request.hostport}" }] },
        ],
      },
    });
    try {
      await fc.assert(
        fc.asyncProperty(anyHostArb, targetArb, fc.boolean(), async (host, target, proxied) => {
          if (proxied && target.startsWith("/")) target = "/p" + target;
          const conn = await Deno.connect({ hostname: "127.0.0.1", port: g.ports.main });
          let a;
          try {
            await conn.write(
              latin1(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
            );
            a = await readAnswer(conn);
          } finally {
            conn.close();
          }
          const what = JSON.stringify({ host, target, head: a.head });
          assert.ok(a.status === 200 || (a.status >= 400 && a.status < 500), what);
          if (a.status !== 200) return;
          const body = new TextDecoder().decode(a.body);
          if (body.startsWith("host=")) {
            assert.ok(validHost(body.slice(5)), what);
            return;
          }
          // Proxied: the upstream saw one well-formed request line and one valid Host.
          const lines = body.split("\r\n");
          assert.match(lines[0], /^GET [\x21-\x7e]+ HTTP\/1\.1$/, what);
          const hosts = lines.filter((l) => /^host:/i.test(l));
          assert.equal(hosts.length, 1, what);
          assert.ok(validHost(hosts[0].slice(5).trim()), what);
        }),
        { numRuns: 150, interruptAfterTimeLimit: 60000 },
      );
      const r = await fetch(`${g.admin}/config/`);
      await r.body?.cancel();
      assert.equal(r.status, 200);
    } finally {
      await g.stop();
      await up.close();
    }
  });
}
