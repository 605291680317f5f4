/**
 * HTTP/2 on `listener_engine: "node"`, with a real Node HTTP/2 client and curl (nghttp2):
 * over TLS by ALPN (h2 and http/1.1 on one port) and as h2c with prior knowledge, handlers and
 * bodies both ways, the access log's HTTP/2 fields, client certificates, certificates chosen
 * by SNI, `strict_sni_host`, and a reload that keeps the session.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { freePort } from "./harness.ts";
import { makePki } from "./pki.ts";
import { echoUpstream, gatehouse } from "../parity2/_h2_server.ts";
import { h2Client, nodeAvailable } from "../parity2/_h2_client.ts";
import { makeClientPki } from "../parity2/client_pki.ts";

const NODE = nodeAvailable();
const pki = await makePki({
  local: { dns: ["localhost"], ip: ["127.0.0.1"] },
  other: { dns: ["other.test"] },
});
const tlsApp = {
  certificates: {
    load_pem: [
      { certificate: pki.leafs.local.cert, key: pki.leafs.local.key },
      { certificate: pki.leafs.other.cert, key: pki.leafs.other.key },
    ],
  },
};
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

function routes(dial: string, hello = "Hello, {http.request.proto}!") {
  return [
    {
      match: [{ path: ["/hello"] }],
      handle: [{
        handler: "static_response",
        body: hello,
        headers: { "Set-Cookie": ["a=1", "b=2"], "X-Tls": ["{http.request.tls.proto}"] },
      }],
      terminal: true,
    },
    { match: [{ path: ["/gone"] }], handle: [{ handler: "error", status_code: 404 }] },
    {
      match: [{ path: ["/echo", "/big", "/slow"] }],
      handle: [{ handler: "reverse_proxy", upstreams: [{ dial }] }],
      terminal: true,
    },
    { handle: [{ handler: "static_response", body: "{http.request.remote.host}" }] },
  ];
}

Deno.test({
  name: "node engine h2: handlers and bodies both ways over TLS (ALPN) and h2c, logged as HTTP/2.0",
  ignore: !NODE,
  async fn() {
    const up = echoUpstream();
    const [tlsPort, h2cPort] = [freePort(), freePort()];
    const srv = await gatehouse({
      tls: tlsApp,
      http: {
        servers: {
          tls: {
            listen: [`127.0.0.1:${tlsPort}`],
            listener_engine: "node",
            tls_connection_policies: [{}],
            logs: {},
            routes: routes(up.dial),
          },
          h2c: {
            listen: [`127.0.0.1:${h2cPort}`],
            listener_engine: "node",
            protocols: ["h1", "h2c"],
            logs: {},
            routes: routes(up.dial),
          },
        },
      },
    });
    try {
      for (const origin of [`https://localhost:${tlsPort}`, `http://127.0.0.1:${h2cPort}`]) {
        const c = h2Client({ origin, ca: pki.caPem });
        try {
          const tls = origin.startsWith("https");
          const hello = await c.request({ path: "/hello" });
          assert.equal(hello.status, 200, origin);
          assert.equal(hello.body, "Hello, HTTP/2.0!");
          assert.equal(hello.headers!["content-length"], "16");
          assert.deepEqual(hello.headers!["set-cookie"], ["a=1", "b=2"]);
          // a placeholder with no value gives an empty header, as Caddy's static_response
          assert.equal(hello.headers!["x-tls"], tls ? "h2" : "");
          assert.equal(hello.headers!.server, "Gatehouse");
          const head = await c.request({ path: "/hello", method: "HEAD" });
          assert.equal(head.status, 200);
          assert.equal(head.length, 0);
          assert.equal((await c.request({ path: "/gone" })).status, 404);
          // 2 MiB up at once, and 64 KiB up in 16 pieces: the upstream got every byte
          const big = "0123456789abcdef".repeat(128 * 1024);
          const echo = await c.request({ path: "/echo", method: "POST", body: big });
          assert.equal(echo.status, 200);
          assert.equal(echo.body, `len=${big.length} sha=${sha(big)}`);
          assert.equal(echo.headers!["x-method"], "POST");
          const slow = await c.request({
            path: "/echo",
            method: "PUT",
            body: "z".repeat(65536),
            slow: [16, 20],
          });
          assert.equal(slow.body, `len=65536 sha=${sha("z".repeat(65536))}`);
          // 4 MiB down, streamed
          const down = await c.request({ path: "/big?n=4096" });
          assert.equal(down.length, 4096 * 1024);
          assert.equal(down.sha256, sha("a".repeat(4096 * 1024)));
          // several streams at once on the one session
          const many = await Promise.all(
            Array.from({ length: 20 }, (_, i) => c.request({ path: `/n${i}` })),
          );
          assert.deepEqual(many.map((r) => r.body), many.map(() => "127.0.0.1"));
          assert.equal(c.lines.filter((l) => l.ev === "connected").length, 1, "one session");
          assert.equal(c.lines.find((l) => l.ev === "connected")!.alpn, tls ? "h2" : "h2c");
        } finally {
          await c.close();
        }
      }
      const rec = (await srv.access()).filter((r) => r.uri === "/hello" && r.method === "GET");
      assert.equal(rec.length, 2);
      for (const r of rec) assert.equal(r.proto, "HTTP/2.0");
      const tls = rec.find((r) => r.tls)!.tls as Record<string, unknown>;
      assert.equal(tls.proto, "h2");
      assert.equal(tls.server_name, "localhost");
      assert.equal(tls.version, 0x0304);
      assert.ok(!rec.find((r) => !r.tls)!.tls, "h2c: no tls object");
    } finally {
      await srv.stop();
      await up.close();
    }
  },
});

Deno.test({
  name:
    "node engine h2: certificates by SNI, strict_sni_host's 421 (the session ends), and a reload that keeps the session",
  ignore: !NODE,
  async fn() {
    const up = echoUpstream();
    const port = freePort();
    const apps = (hello: string) => ({
      tls: tlsApp,
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            strict_sni_host: true,
            tls_connection_policies: [{}],
            routes: routes(up.dial, hello),
          },
        },
      },
    });
    const srv = await gatehouse(apps("one"));
    try {
      // strict_sni_host runs on the node engine: each name gets its own certificate
      for (const name of ["localhost", "other.test"]) {
        const c = h2Client({
          origin: `https://localhost:${port}`,
          servername: name,
          ca: pki.caPem,
        });
        try {
          assert.equal(
            (await c.request({ path: "/hello", authority: `${name}:${port}` })).body,
            "one",
          );
          assert.deepEqual(c.lines.find((l) => l.ev === "connected"), {
            ev: "connected",
            alpn: "h2",
            cn: name,
          });
        } finally {
          await c.close();
        }
      }
      // a Host other than the SNI: 421, and the session is ended (GOAWAY) so the client reconnects
      const c = h2Client({ origin: `https://localhost:${port}`, ca: pki.caPem });
      try {
        const r = await c.request({ path: "/hello", authority: `other.test:${port}` });
        assert.equal(r.status, 421);
        await c.event((e) => e.ev === "goaway" || e.ev === "close", "session end");
      } finally {
        await c.close();
      }
      // a reload keeps the listener and the open session: the next stream gets the new config
      const k = h2Client({ origin: `https://localhost:${port}`, ca: pki.caPem });
      try {
        assert.equal((await k.request({ path: "/hello" })).body, "one");
        assert.ok(await srv.load(apps("two")));
        assert.equal((await k.request({ path: "/hello" })).body, "two");
        assert.deepEqual(k.lines.filter((l) => l.ev !== undefined).map((l) => l.ev), ["connected"]);
      } finally {
        await k.close();
      }
    } finally {
      await srv.stop();
      await up.close();
    }
  },
});

Deno.test({
  name:
    "node engine h2: client certificates from the trusted CA get in over h2, others are refused",
  ignore: !NODE,
  async fn() {
    const cp = await makeClientPki();
    const port = freePort();
    const srv = await gatehouse({
      tls: {
        certificates: {
          load_pem: [{
            certificate: cp.server.leafs.local.cert,
            key: cp.server.leafs.local.key,
          }],
        },
      },
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            logs: {},
            tls_connection_policies: [{
              client_authentication: {
                ca: { provider: "inline", trusted_ca_certs: [cp.trustedCaDerB64] },
                mode: "require_and_verify",
              },
            }],
            routes: [{
              handle: [{
                handler: "static_response",
                body: "{http.request.tls.client.subject} {http.request.proto}",
              }],
            }],
          },
        },
      },
    });
    try {
      const origin = `https://localhost:${port}`;
      const good = h2Client({ origin, ca: cp.server.caPem, cert: cp.good.cert, key: cp.good.key });
      try {
        const r = await good.request({ path: "/" });
        assert.equal(r.status, 200);
        assert.equal(r.body, "O=Gatehouse Tests,CN=alice HTTP/2.0");
      } finally {
        await good.close();
      }
      for (const who of [cp.untrusted, undefined]) {
        const bad = h2Client({ origin, ca: cp.server.caPem, cert: who?.cert, key: who?.key });
        try {
          const r = await bad.request({ path: "/" });
          // no answer: the stream ends with the connection (an error, or an end with no status)
          assert.ok(!r.status, `refused: ${JSON.stringify(r)}`);
          assert.equal(r.length ?? 0, 0);
        } finally {
          await bad.close();
        }
      }
      assert.equal((await srv.access()).length, 1, "no route ran for the refused clients");
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name:
    "node engine h2: behind proxy_protocol, h2 over TLS and h2c take the client address from the PROXY header",
  ignore: !NODE,
  async fn() {
    const [tlsPort, h2cPort] = [freePort(), freePort()];
    const pp = { wrapper: "proxy_protocol", allow: ["127.0.0.0/8"] };
    const echo = [{
      handle: [{
        handler: "static_response",
        body: "{http.request.remote.host} {http.request.remote.port} {http.request.proto}",
      }],
    }];
    const srv = await gatehouse({
      tls: tlsApp,
      http: {
        servers: {
          tls: {
            listen: [`127.0.0.1:${tlsPort}`],
            listener_wrappers: [pp, { wrapper: "tls" }],
            tls_connection_policies: [{}],
            routes: echo,
          },
          h2c: {
            listen: [`127.0.0.1:${h2cPort}`],
            listener_wrappers: [pp],
            protocols: ["h1", "h2c"],
            routes: echo,
          },
        },
      },
    });
    try {
      for (const origin of [`https://localhost:${tlsPort}`, `http://127.0.0.1:${h2cPort}`]) {
        const c = h2Client({
          origin,
          ca: pki.caPem,
          proxy: "PROXY TCP4 203.0.113.9 127.0.0.1 4321 443\r\n",
        });
        try {
          const many = await Promise.all(
            Array.from({ length: 5 }, (_, i) => c.request({ path: `/p${i}` })),
          );
          for (const r of many) assert.equal(r.body, "203.0.113.9 4321 HTTP/2.0", origin);
          const big = "x".repeat(300_000);
          const up = await c.request({ path: "/up", method: "POST", body: big });
          assert.equal(up.status, 200);
          assert.equal(
            c.lines.find((l) => l.ev === "connected")!.alpn,
            origin.startsWith("https") ? "h2" : "h2c",
          );
        } finally {
          await c.close();
        }
      }
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name:
    "node engine h2: an answer that leaves the request body unread ends the stream (RST_STREAM NO_ERROR after the whole answer); the session goes on and closes",
  ignore: !NODE,
  async fn() {
    const port = freePort();
    const big = "y".repeat(1 << 20);
    const srv = await gatehouse({
      http: {
        servers: {
          h2c: {
            listen: [`127.0.0.1:${port}`],
            protocols: ["h1", "h2c"],
            listener_engine: "node",
            routes: [
              {
                match: [{ path: ["/big"] }],
                handle: [{ handler: "static_response", body: big }],
                terminal: true,
              },
              { handle: [{ handler: "static_response", body: "small" }] },
            ],
          },
        },
      },
    });
    const c = h2Client({ origin: `http://127.0.0.1:${port}` });
    try {
      // far more unread body than the connection's 64 KiB window, on one session
      for (let i = 0; i < 6; i++) {
        const r = await c.request({ path: `/s${i}`, method: "POST", body: "z".repeat(300_000) });
        assert.equal(r.status, 200);
        assert.equal(r.body, "small");
      }
      // the whole 1 MiB answer arrives before the reset
      const b = await c.request({ path: "/big", method: "PUT", body: "z".repeat(300_000) });
      assert.equal(b.status, 200);
      assert.equal(b.length, big.length);
      assert.equal(b.sha256, sha(big));
      assert.equal((await c.request({ path: "/after" })).body, "small");
    } finally {
      await c.close(); // hung before: the unread streams never ended, nor did the session
      await srv.stop();
    }
  },
});
