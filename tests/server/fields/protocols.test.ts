/**
 * `protocols` and `listen_protocols` on a running process, asked with curl: HTTP/2 over TLS is
 * offered by ALPN only when listed, cleartext HTTP/2 (prior knowledge) is answered only where
 * `h2c` is listed (505 elsewhere, as Deno.serve would otherwise speak it), and a server on the
 * node engine follows the same lists.
 */
import assert from "node:assert/strict";
import { makePki } from "../http/pki.ts";
import { runServer } from "./_server.ts";

const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });
const tlsApp = {
  certificates: { load_pem: [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }] },
};
const ok = [{ handle: [{ handler: "static_response", body: "ok" }] }];
const tls = { tls_connection_policies: [{}] };

const srv = await runServer({
  servers: {
    plain: { listen: ["127.0.0.1:0"], routes: ok },
    h2c: { listen: ["127.0.0.1:0"], protocols: ["h1", "h2c"], routes: ok },
    split: {
      listen: ["127.0.0.1:0", "127.0.0.1:0"],
      listen_protocols: [["h1", "h2c"], null],
      routes: ok,
    },
    tls: { listen: ["127.0.0.1:0"], routes: ok, ...tls },
    tls_h1: { listen: ["127.0.0.1:0"], protocols: ["h1"], routes: ok, ...tls },
    tls_node: { listen: ["127.0.0.1:0"], idle_timeout: "1m", routes: ok, ...tls },
    tls_node_h1: {
      listen: ["127.0.0.1:0"],
      idle_timeout: "1m",
      protocols: ["h1"],
      routes: ok,
      ...tls,
    },
  },
}, { tls: tlsApp });

/** curl's view of one request: HTTP version and status. */
async function curl(url: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("curl", {
    args: ["-sk", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", ...args, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

const http = (name: string, i = 0) => `http://127.0.0.1:${srv.ports(name)[i]}/`;
const https = (name: string) => `https://localhost:${srv.ports(name)[0]}/`;

Deno.test({
  name: "fields: h2c is answered only where protocols or listen_protocols list it",
  sanitizeResources: false,
  async fn() {
    assert.equal(await curl(http("plain"), "--http1.1"), "1.1 200");
    assert.equal(await curl(http("plain"), "--http2-prior-knowledge"), "2 505");
    assert.equal(await curl(http("h2c"), "--http2-prior-knowledge"), "2 200");
    assert.equal(await curl(http("h2c"), "--http1.1"), "1.1 200");
    assert.equal(await curl(http("split", 0), "--http2-prior-knowledge"), "2 200");
    assert.equal(await curl(http("split", 1), "--http2-prior-knowledge"), "2 505");
    assert.equal(await curl(http("split", 1), "--http1.1"), "1.1 200");
  },
});

Deno.test({
  name: "fields: HTTP/2 over TLS is offered by ALPN only when listed, on both engines",
  sanitizeResources: false,
  async fn() {
    assert.equal(await curl(https("tls"), "--http2"), "2 200");
    assert.equal(await curl(https("tls_h1"), "--http2"), "1.1 200");
    assert.equal(await curl(https("tls_node"), "--http2"), "2 200");
    assert.equal(await curl(https("tls_node"), "--http1.1"), "1.1 200");
    assert.equal(await curl(https("tls_node_h1"), "--http2"), "1.1 200");
  },
});

Deno.test({
  name: "fields: stop the protocols server",
  sanitizeResources: false,
  fn: () => srv.stop(),
});
