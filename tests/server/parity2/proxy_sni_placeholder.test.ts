/**
 * `transport http { tls_server_name {http.request.host} }`: placeholders in `tls.server_name`
 * are replaced per request (Caddy's `ReplaceAll`, unknown ones empty), and a connection made
 * for one name never carries a request for another (HTTP/1.1 pool and HTTP/2 sessions). The
 * upstream is a `node:http2` TLS server (HTTP/1.1 too) answering with the SNI its connection
 * was made with and which connection it was.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";
import type tls from "node:tls";
import { startServer } from "../../../lib/server/embed.ts";
import { freePort } from "../fixtures/helpers.ts";
import { makePki } from "../http/pki.ts";
import { raw } from "../http/raw.ts";

const pki = await makePki({ up: { dns: ["a.test", "b.test"], ip: ["127.0.0.1"] } });
const der = pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "");

/** A TLS upstream answering `<sni or -> <connection number> <HTTP version>`. */
async function sniUpstream(): Promise<{ port: number; close(): Promise<void> }> {
  // connections: HTTP/1.1 ones by socket, HTTP/2 ones by session
  const ids = new WeakMap<object, number>();
  let next = 0;
  const server = http2.createSecureServer({
    cert: pki.leafs.up.cert,
    key: pki.leafs.up.key,
    allowHTTP1: true,
  }, (req, res) => {
    const socket =
      (req.httpVersion === "2.0" ? req.stream.session!.socket : req.socket) as tls.TLSSocket;
    const sni = (socket as unknown as { servername?: string | false }).servername || "-";
    const conn = req.httpVersion === "2.0" ? req.stream.session! : socket;
    res.end(`${sni} ${ids.get(conn)} ${req.httpVersion}`);
  });
  server.on("secureConnection", (s: tls.TLSSocket) => ids.set(s, next++));
  server.on("session", (s: http2.ServerHttp2Session) => ids.set(s, next++));
  const sockets = new Set<tls.TLSSocket>();
  server.on("secureConnection", (s: tls.TLSSocket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  const port = freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function proxy(path: string, upPort: number, transport: Record<string, unknown>) {
  return {
    match: [{ path: [path] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: `127.0.0.1:${upPort}` }],
      transport: { protocol: "http", ...transport },
    }],
    terminal: true,
  };
}

async function withFront(
  routes: (up: number) => unknown[],
  fn: (base: string) => Promise<void>,
): Promise<void> {
  const up = await sniUpstream();
  const front = freePort();
  const server = await startServer({
    config: {
      admin: { disabled: true },
      apps: {
        http: {
          servers: {
            front: {
              listen: [`127.0.0.1:${front}`],
              automatic_https: { disable: true },
              routes: routes(up.port),
            },
          },
        },
      },
    },
  });
  try {
    await fn(`http://127.0.0.1:${front}`);
  } finally {
    await server.stop();
    await up.close();
  }
}

Deno.test("reverse_proxy: tls.server_name {http.request.host} is each request's SNI, on its own connections (HTTP/1.1 and HTTP/2)", async () => {
  const byHost = { root_ca_pool: [der], server_name: "{http.request.host}" };
  await withFront((up) => [
    proxy("/h1", up, { tls: byHost, versions: ["1.1"] }),
    proxy("/h2", up, { tls: byHost, versions: ["2"] }),
    proxy("/alpn", up, { tls: byHost, versions: ["1.1", "2"] }),
  ], async (base) => {
    for (const [path, version] of [["/h1", "1.1"], ["/h2", "2.0"], ["/alpn", "2.0"]]) {
      const seen: string[][] = [];
      for (const host of ["a.test", "b.test", "a.test", "b.test"]) {
        const r = await raw(base, "GET", path, { host });
        assert.equal(r.status, 200, `${path} ${host}: ${r.text}`);
        seen.push(r.text.split(" "));
      }
      assert.deepEqual(
        seen.map(([sni, , v]) => `${sni} ${v}`),
        ["a.test", "b.test", "a.test", "b.test"].map((h) => `${h} ${version}`),
        path,
      );
      // one connection per name, reused by that name's requests only
      const conn = seen.map(([, id]) => id);
      assert.equal(conn[0], conn[2], `${path}: ${conn}`);
      assert.equal(conn[1], conn[3], `${path}: ${conn}`);
      assert.notEqual(conn[0], conn[1], `${path}: ${conn}`);
    }
  });
});

Deno.test('reverse_proxy: a tls.server_name placeholder that resolves to nothing is no name, as Caddy\'s ReplaceAll with ""', async () => {
  const sni = "{http.request.header.X-Sni}";
  await withFront((up) => [
    proxy("/verify", up, { tls: { root_ca_pool: [der], server_name: sni } }),
    proxy("/insecure", up, { tls: { insecure_skip_verify: true, server_name: sni } }),
  ], async (base) => {
    const named = await raw(base, "GET", "/verify", { "x-sni": "b.test" });
    assert.equal(named.status, 200, named.text);
    assert.equal(named.text.split(" ")[0], "b.test");
    // Go's TLS client will not verify without a name: the dial fails (502)
    const unnamed = await raw(base, "GET", "/verify");
    assert.equal(unnamed.status, 502, unnamed.text);
    // without verification the handshake goes without SNI (the upstream is an IP)
    const insecure = await raw(base, "GET", "/insecure");
    assert.equal(insecure.status, 200, insecure.text);
    assert.equal(insecure.text.split(" ")[0], "-");
    const insecureNamed = await raw(base, "GET", "/insecure", { "x-sni": "a.test" });
    assert.equal(insecureNamed.text.split(" ")[0], "a.test");
  });
});
