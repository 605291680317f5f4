/**
 * Listener wrappers on a running process: `proxy_protocol` (v1 and v2, each policy, before TLS,
 * its timeout) and `http_redirect`, through raw sockets; and a bounded fuzz of the bytes a
 * client may send before its request: the server answers or closes, never hangs, and keeps
 * serving.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  encodeProxyV1,
  encodeProxyV2,
} from "../../../lib/server/listeners/wrappers/proxy_header.ts";
import { makePki } from "../http/pki.ts";
import { oneResponse, RawConn, runServer } from "./_server.ts";

const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });
const tlsApp = {
  certificates: { load_pem: [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }] },
};
const echo = [{
  handle: [{
    handler: "static_response",
    body: "{http.request.remote.host} {http.request.remote.port} {http.request.scheme}",
  }],
}];
const pp = (o: Record<string, unknown> = {}) => ({ wrapper: "proxy_protocol", ...o });
const loopback = ["127.0.0.0/8"];

const srv = await runServer({
  servers: {
    use: { listen: ["127.0.0.1:0"], listener_wrappers: [pp({ allow: loopback })], routes: echo },
    ignore: { listen: ["127.0.0.1:0"], listener_wrappers: [pp()], routes: echo },
    require: {
      listen: ["127.0.0.1:0"],
      listener_wrappers: [pp({ fallback_policy: "REQUIRE", timeout: "300ms" })],
      routes: echo,
    },
    deny: { listen: ["127.0.0.1:0"], listener_wrappers: [pp({ deny: loopback })], routes: echo },
    skip: {
      listen: ["127.0.0.1:0"],
      listener_wrappers: [pp({ fallback_policy: "SKIP" })],
      routes: echo,
    },
    slow: {
      listen: ["127.0.0.1:0"],
      listener_wrappers: [pp({ allow: loopback, timeout: "300ms" })],
      routes: echo,
    },
    tls: {
      listen: ["127.0.0.1:0"],
      listener_wrappers: [pp({ allow: loopback }), { wrapper: "tls" }],
      tls_connection_policies: [{}],
      routes: echo,
    },
    redirect: {
      listen: ["127.0.0.1:0"],
      listener_wrappers: [{ wrapper: "http_redirect" }, { wrapper: "tls" }],
      tls_connection_policies: [{}],
      routes: echo,
    },
    redirect_small: {
      listen: ["127.0.0.1:0"],
      listener_wrappers: [{ wrapper: "http_redirect", max_header_bytes: 64 }, { wrapper: "tls" }],
      tls_connection_policies: [{}],
      routes: echo,
    },
    fuzz: {
      listen: ["127.0.0.1:0"],
      read_header_timeout: "1s",
      listener_wrappers: [pp({ allow: loopback, timeout: "500ms" })],
      routes: echo,
    },
  },
}, { tls: tlsApp });

const port = (name: string) => srv.ports(name)[0];
const GET = "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
const enc = new TextEncoder();
const v1 = (host: string, p: number) =>
  encodeProxyV1({ hostname: host, port: p }, {
    hostname: "127.0.0.1",
    port: 443,
  });

/** Sends `before` then a request; the body, or null when closed without an answer. */
async function ask(name: string, before: Uint8Array | string): Promise<string | null> {
  const c = await RawConn.open(port(name));
  try {
    if (before.length) await c.send(before);
    await c.send(GET);
    const r = await c.until((x) => oneResponse(x));
    if (!oneResponse(r)) return null;
    return r.text.slice(r.text.indexOf("\r\n\r\n") + 4);
  } finally {
    await c.close();
  }
}

function status(text: string | null): number {
  return text === null ? 0 : Number(/^HTTP\/1\.[01] (\d+)/.exec(text)?.[1]);
}

Deno.test({
  name: "fields: proxy_protocol USE takes the client address from v1 and v2 headers",
  sanitizeResources: false,
  async fn() {
    assert.equal(await ask("use", v1("203.0.113.7", 5000)), "203.0.113.7 5000 http");
    const v2 = encodeProxyV2({
      source: { hostname: "2001:db8::7", port: 6000 },
      destination: { hostname: "::1", port: 443 },
      tlvs: new Uint8Array([0x02, 0x00, 0x03, 0x61, 0x62, 0x63]), // an authority TLV
    });
    assert.equal(await ask("use", v2), "2001:db8::7 6000 http");
    // a header is optional under USE; LOCAL (a health check) keeps the real peer
    assert.match((await ask("use", ""))!, /^127\.0\.0\.1 \d+ http$/);
    assert.match((await ask("use", encodeProxyV2({ local: true })))!, /^127\.0\.0\.1 \d+ http$/);
    // a header that cannot be valid closes the connection unanswered
    assert.equal(await ask("use", "PROXY TCP4 203.0.113.7 nowhere 1 2\r\n"), null);
  },
});

Deno.test({
  name: "fields: proxy_protocol IGNORE, REQUIRE, REJECT (deny) and SKIP",
  sanitizeResources: false,
  async fn() {
    // no allow list: the default IGNORE consumes the header but keeps the real peer
    assert.match((await ask("ignore", v1("203.0.113.7", 5000)))!, /^127\.0\.0\.1 \d+ http$/);
    assert.match((await ask("ignore", ""))!, /^127\.0\.0\.1 /);
    // REQUIRE: without a header there is no connection; with one, its address is used
    assert.equal(await ask("require", ""), null);
    assert.equal(await ask("require", v1("198.51.100.1", 1)), "198.51.100.1 1 http");
    // deny: a header closes the connection; a plain request is served
    assert.equal(await ask("deny", v1("203.0.113.7", 5000)), null);
    assert.match((await ask("deny", ""))!, /^127\.0\.0\.1 /);
    // SKIP: nothing is read, so the header reaches HTTP and is a bad request
    const c = await RawConn.open(port("skip"));
    await c.send(v1("203.0.113.7", 5000));
    await c.send(GET);
    const r = await c.until(oneResponse);
    assert.equal(status(r.text), 400);
    await c.close();
  },
});

Deno.test({
  name: "fields: proxy_protocol timeout: silence goes on without a header, REQUIRE closes",
  sanitizeResources: false,
  async fn() {
    const c = await RawConn.open(port("slow"));
    await new Promise((r) => setTimeout(r, 700));
    await c.send(GET);
    const r = await c.until(oneResponse);
    assert.match(r.text, /\r\n\r\n127\.0\.0\.1 \d+ http$/);
    await c.close();

    const q = await RawConn.open(port("require"));
    const closed = await q.until(() => false);
    assert.ok(closed.closed, "REQUIRE closes a silent connection after the timeout");
    assert.equal(closed.text, "");
    await q.close();
  },
});

Deno.test({
  name: "fields: proxy_protocol before TLS: the header, then the handshake, then HTTPS",
  sanitizeResources: false,
  async fn() {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: port("tls") });
    await conn.write(v1("192.0.2.44", 4444));
    const t = await Deno.startTls(conn, { hostname: "localhost", caCerts: [pki.caPem] });
    await t.write(enc.encode("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"));
    let text = "";
    const buf = new Uint8Array(4096);
    for (let n; (n = await t.read(buf)) !== null;) {
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    t.close();
    assert.match(text, /^HTTP\/1\.1 200 /);
    assert.match(text, /\r\n\r\n192\.0\.2\.44 4444 https$/);
  },
});

Deno.test({
  name: "fields: http_redirect answers plain HTTP on a TLS port with 308 to https; TLS is served",
  sanitizeResources: false,
  async fn() {
    const p = port("redirect");
    const c = await RawConn.open(p);
    await c.send(`GET /a/b?c=d HTTP/1.1\r\nHost: localhost:${p}\r\n\r\n`);
    const r = await c.until(() => false);
    assert.ok(r.closed);
    assert.match(r.text, /^HTTP\/1\.0 308 Permanent Redirect\r\n/);
    assert.match(r.text, new RegExp(`\r\nLocation: https://localhost:${p}/a/b\\?c=d\r\n`));
    await c.close();
    // a request the redirect cannot name (no Host) is refused, not redirected
    const bad = await RawConn.open(p);
    await bad.send("GET / HTTP/1.1\r\n\r\n");
    assert.match((await bad.until(() => false)).text, /^HTTP\/1\.0 400 /);
    await bad.close();
    // max_header_bytes: a longer head is not answered, the connection just closes
    const long = await RawConn.open(port("redirect_small"));
    await long.send(`GET /${"a".repeat(100)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    const cut = await long.until(() => false);
    assert.ok(cut.closed);
    assert.equal(cut.text, "");
    await long.close();
    const short = await RawConn.open(port("redirect_small"));
    await short.send("GET /s HTTP/1.1\r\nHost: a.test\r\n\r\n");
    assert.match((await short.until(() => false)).text, /^HTTP\/1\.0 308 /);
    await short.close();
    const res = await fetch(`https://localhost:${p}/x`, {
      client: Deno.createHttpClient({ caCerts: [pki.caPem] }),
    });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^127\.0\.0\.1 \d+ https$/);
  },
});

Deno.test({
  name: "fields: any bytes before a request: an answer or a close, never a hang; serving goes on",
  sanitizeResources: false,
  async fn() {
    const header = fc.oneof(
      fc.tuple(fc.ipV4(), fc.nat(65535)).map(([h, p]) => v1(h, p)),
      fc.tuple(fc.ipV6(), fc.nat(65535)).map(([h, p]) =>
        encodeProxyV2({
          source: { hostname: h, port: p },
          destination: { hostname: "::1", port: 1 },
        })
      ),
    );
    const prefix = fc.oneof(
      fc.uint8Array({ maxLength: 120 }),
      fc.tuple(header, fc.array(fc.tuple(fc.nat(), fc.nat(255)), { maxLength: 4 }), fc.nat(40))
        .map(([h, flips, cut]) => {
          const m = h.slice(0, Math.max(0, h.length - cut));
          for (const [i, b] of flips) if (m.length) m[i % m.length] = b;
          return m;
        }),
    );
    await fc.assert(
      fc.asyncProperty(prefix, fc.boolean(), async (bytes, withRequest) => {
        const c = await RawConn.open(port("fuzz"));
        try {
          if (bytes.length) await c.send(bytes);
          if (withRequest) await c.send(GET);
          await c.conn.closeWrite();
          const r = await c.until(() => false, 8000);
          assert.ok(r.closed, "the server ends the connection");
          if (r.text) assert.ok([200, 400, 408, 431].includes(status(r.text)), r.text.slice(0, 40));
        } finally {
          await c.close();
        }
      }),
      { numRuns: 60, interruptAfterTimeLimit: 60_000 },
    );
    assert.match((await ask("fuzz", v1("203.0.113.9", 9)))!, /^203\.0\.113\.9 9 http$/);
  },
});

Deno.test({
  name: "fields: stop the wrappers server",
  sanitizeResources: false,
  fn: () => srv.stop(),
});
