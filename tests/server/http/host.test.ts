/**
 * One validated request host, on raw sockets against a real `gatehouse run` process, for both
 * listener engines: an absolute-form target's authority wins over `Host` for routing, the
 * `Host` sent upstream and placeholders; a malformed `Host` or authority, or several `Host`
 * fields, get 400 before any route runs (the upstream sees nothing).
 */
import assert from "node:assert/strict";
import { HostileUpstream, readAnswer, startGatehouse } from "./hostile.ts";

function latin1(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
}

/** Sends raw request bytes and reads the answer. */
async function exchange(port: number, request: string) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(latin1(request));
    const a = await readAnswer(conn);
    return { status: a.status, head: a.head, body: new TextDecoder().decode(a.body) };
  } finally {
    conn.close();
  }
}

const get = (target: string, host: string) =>
  `GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

/** Request heads that must get 400 whatever route they would take. */
const MALFORMED: Record<string, string> = {
  "slash in Host": get("/x", "a.example/evil"),
  "query in Host": get("/x", "a.example?x=1"),
  "fragment in Host": get("/x", "a.example#x"),
  "space in Host": get("/x", "a.example b"),
  "at in Host": get("/x", "user@a.example"),
  "tab in Host": get("/x", "a.exa\tmple"),
  "control character in Host": get("/x", "a.exa\x01mple"),
  "percent escape in Host": get("/x", "a%2eexample"),
  "comma in Host": get("/x", "a.example,b.example"),
  "non-ASCII Host": get("/x", "\xe9.example"),
  "port too large": get("/x", "a.example:99999"),
  "port 65536": get("/x", "a.example:65536"),
  "port 0": get("/x", "a.example:0"),
  "port 00000": get("/x", "a.example:00000"),
  "IPv6 with port 0": get("/x", "[::1]:0"),
  "port not digits": get("/x", "a.example:8o"),
  "empty port": get("/x", "a.example:"),
  "empty name": get("/x", ":80"),
  "unclosed IPv6": get("/x", "[::1"),
  "not an IPv6": get("/x", "[zz::1]"),
  "IPv6 zone": get("/x", "[fe80::1%25eth0]"),
  "two Host fields":
    "GET /x HTTP/1.1\r\nHost: a.example\r\nHost: a.example\r\nConnection: close\r\n\r\n",
  "two different Host fields":
    "GET /x HTTP/1.1\r\nHost: b.example\r\nHost: a.example\r\nConnection: close\r\n\r\n",
  "userinfo in absolute-form": get("http://user@a.example/x", "b.example"),
  "bad port in absolute-form": get("http://a.example:99999/x", "b.example"),
  "port 0 in absolute-form": get("http://a.example:0/x", "b.example"),
  "ftp absolute-form": get("ftp://a.example/x", "b.example"),
  "valid absolute-form, malformed Host": get("http://b.example/x", "a.example/evil"),
};

for (const engine of ["deno", "node"] as const) {
  Deno.test(`request host (${engine} engine): absolute-form wins over Host for routing, upstream Host and placeholders; malformed hosts get 400`, async (t) => {
    const up = new HostileUpstream({}, undefined, true);
    const g = await startGatehouse({
      main: {
        listener_engine: engine,
        routes: [
          {
            match: [{ host: ["a.example"] }],
            handle: [
              { handler: "headers", response: { set: { "X-Route": ["a {http.request.host}"] } } },
              { handler: "reverse_proxy", upstreams: [{ dial: up.dial }] },
            ],
            terminal: true,
          },
          {
            match: [{ host: ["b.example"] }],
            handle: [{
              handler: "static_response",
              body:
                "route b host={http.request.host} hostport={http.request.hostport} header={http.request.header.Host} scheme={http.request.scheme}",
            }],
            terminal: true,
          },
          {
            handle: [{ handler: "static_response", body: "default {http.request.hostport}" }],
          },
        ],
      },
    });
    const port = g.ports.main;
    try {
      await t.step("absolute-form target routed, proxied and seen as its authority", async () => {
        const r = await exchange(port, get("http://a.example/x?q=1", "b.example"));
        assert.equal(r.status, 200, r.head);
        assert.match(r.head, /\r\nx-route: a a\.example(\r\n|$)/i);
        const seen = r.body.split("\r\n");
        assert.equal(seen[0], "GET /x?q=1 HTTP/1.1");
        const hosts = seen.filter((l) => /^host:/i.test(l));
        assert.deepEqual(hosts, ["host: a.example"]);
        assert.ok(seen.includes("x-forwarded-host: a.example"), r.body);
      });
      await t.step("and the other way round", async () => {
        const r = await exchange(port, get("http://b.example:8080/y", "a.example"));
        assert.equal(
          r.body,
          "route b host=b.example hostport=b.example:8080 header=b.example:8080 scheme=http",
        );
      });
      await t.step("https in an absolute-form target does not make plain HTTP https", async () => {
        const r = await exchange(port, get("https://b.example/y", "b.example"));
        assert.equal(
          r.body,
          "route b host=b.example hostport=b.example header=b.example scheme=http",
        );
      });
      await t.step("origin-form: Host as sent, IPv6 and ports accepted", async () => {
        const r = await exchange(port, get("/x", "b.example"));
        assert.equal(
          r.body,
          "route b host=b.example hostport=b.example header=b.example scheme=http",
        );
        const v6 = await exchange(port, get("/x", "[::1]:8080"));
        assert.equal(v6.body, "default [::1]:8080");
        const upper = await exchange(port, get("/x", "B.EXAMPLE"));
        assert.match(upper.body, /^route b host=b\.example /i, "host matching ignores case");
        const proxied = await exchange(port, get("/z", "a.example:8443"));
        assert.ok(proxied.body.split("\r\n").includes("host: a.example:8443"), proxied.body);
      });
      for (const [what, request] of Object.entries(MALFORMED)) {
        await t.step(`400: ${what}`, async () => {
          const hits = up.events("").hits;
          const r = await exchange(port, request);
          assert.equal(r.status, 400, `${what}: ${r.head}`);
          assert.doesNotMatch(r.body, /route b|default/);
          assert.equal(up.events("").hits, hits, `${what}: nothing reached the upstream`);
        });
      }
      const admin = await fetch(`${g.admin}/config/`);
      await admin.body?.cancel();
      assert.equal(admin.status, 200);
    } finally {
      await g.stop();
      await up.close();
    }
  });
}
