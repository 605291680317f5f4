/**
 * `protocols` and `listen_protocols` on a running process, asked with curl: HTTP/2 over TLS is
 * offered by ALPN only when listed, cleartext HTTP/2 (prior knowledge) is answered where `h2c`
 * is listed or `h1` and `h2` both are, as current Caddy (elsewhere the request gets no answer:
 * its stream is reset, as Deno.serve would otherwise speak it), and a server on the node
 * engine follows the same lists. `h2` alone and `h2c` alone are current Caddy's scenarios (caddytest/integration/h2listener_test.go,
 * served since v2.10.1, caddyserver/caddy#6961; Caddy 2.6.2 refused them); `h1` alone and
 * `h1 h2c` are compared with Caddy 2.6.2.
 */
import assert from "node:assert/strict";
import { makePki } from "../http/pki.ts";
import { caddyAvailable, startCaddy } from "../parity2/caddy.ts";
import { runServer } from "./_server.ts";

const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });
const tlsApp = {
  certificates: { load_pem: [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }] },
};
const ok = [{ handle: [{ handler: "static_response", body: "ok" }] }];
const proto = [{
  handle: [{ handler: "static_response", body: "{http.request.tls.proto} {http.request.proto}" }],
}];
const tls = { tls_connection_policies: [{}] };

const srv = await runServer({
  servers: {
    plain: { listen: ["127.0.0.1:0"], routes: ok },
    plain_node: { listen: ["127.0.0.1:0"], idle_timeout: "1m", routes: ok },
    plain_h1_h2: { listen: ["127.0.0.1:0"], protocols: ["h1", "h2"], routes: ok },
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
    h1: { listen: ["127.0.0.1:0"], protocols: ["h1"], routes: proto },
    h1_node: { listen: ["127.0.0.1:0"], protocols: ["h1"], idle_timeout: "1m", routes: proto },
    h2c_h1: { listen: ["127.0.0.1:0"], protocols: ["h2c", "h1"], routes: proto },
    h2c_only: { listen: ["127.0.0.1:0"], protocols: ["h2c"], routes: proto },
    tls_h2_only: { listen: ["127.0.0.1:0"], protocols: ["h2"], routes: proto, ...tls },
    tls_h2_h1: { listen: ["127.0.0.1:0"], protocols: ["h2", "h1"], routes: proto, ...tls },
    tls_h1_proto: { listen: ["127.0.0.1:0"], protocols: ["h1"], routes: proto, ...tls },
  },
}, { tls: tlsApp });

/** curl's view of one request: HTTP version and status ("0 000": no answer). */
async function curl(url: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("curl", {
    args: ["-sk", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", ...args, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout);
}

/** curl's view of one request with the body: `<version> <status> <body>`, or "failed". */
async function curlBody(url: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("curl", {
    args: ["-sk", "-w", " %{http_version} %{http_code}", ...args, url],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) return "failed";
  const text = new TextDecoder().decode(out.stdout);
  const [version, status] = text.slice(text.lastIndexOf(" ", text.lastIndexOf(" ") - 1) + 1)
    .split(" ");
  return `${version} ${status} ${text.slice(0, text.lastIndexOf(" ", text.lastIndexOf(" ") - 1))}`;
}

const http = (name: string, i = 0) => `http://127.0.0.1:${srv.ports(name)[i]}/`;
const https = (name: string) => `https://localhost:${srv.ports(name)[0]}/`;

Deno.test({
  name:
    "fields: h2c is answered where protocols or listen_protocols list it, or list h1 and h2 (the default), as current Caddy",
  sanitizeResources: false,
  async fn() {
    // current Caddy serves h2c wherever h1 and h2 are on (since v2.10.1, caddyserver/caddy#6961;
    // caddytest/integration/proxyprotocol_test.go speaks h2c to a server of the default
    // protocols); Caddy 2.6.2 needed h2c listed
    assert.equal(await curl(http("plain"), "--http1.1"), "1.1 200");
    assert.equal(await curl(http("plain"), "--http2-prior-knowledge"), "2 200");
    assert.equal(await curl(http("plain_node"), "--http2-prior-knowledge"), "2 200");
    assert.equal(await curl(http("plain_h1_h2"), "--http2-prior-knowledge"), "2 200");
    assert.equal(await curl(http("h2c"), "--http2-prior-knowledge"), "2 200");
    assert.equal(await curl(http("h2c"), "--http1.1"), "1.1 200");
    assert.equal(await curl(http("split", 0), "--http2-prior-knowledge"), "2 200");
    assert.equal(await curl(http("split", 1), "--http2-prior-knowledge"), "2 200");
    assert.equal(await curl(http("split", 1), "--http1.1"), "1.1 200");
    // h1 alone: no HTTP/2 (below, and "Caddy 2.6.2 agrees on h1 alone")
    assert.equal(await curl(http("h1"), "--http2-prior-knowledge"), "0 000");
    assert.equal(await curl(http("h1_node"), "--http2-prior-knowledge"), "0 000");
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
  name: "fields: h2c alone, h1 alone and both on a plain listener, as Caddy's h2listener scenario",
  sanitizeResources: false,
  async fn() {
    const h2c = "--http2-prior-knowledge";
    // a TLS placeholder stays as written on a cleartext request, as in Caddy (compared below)
    assert.equal(await curlBody(http("h2c_only"), h2c), "2 200 {http.request.tls.proto} HTTP/2.0");
    assert.equal(await curlBody(http("h2c_only"), "--http1.1"), "failed");
    assert.equal(
      await curlBody(http("h1"), "--http1.1"),
      "1.1 200 {http.request.tls.proto} HTTP/1.1",
    );
    assert.equal(await curlBody(http("h1"), h2c), "failed");
    assert.equal(await curlBody(http("h1_node"), h2c), "failed");
    assert.equal(await curlBody(http("h2c_h1"), h2c), "2 200 {http.request.tls.proto} HTTP/2.0");
    assert.equal(
      await curlBody(http("h2c_h1"), "--http1.1"),
      "1.1 200 {http.request.tls.proto} HTTP/1.1",
    );
  },
});

Deno.test({
  name:
    "fields: an h2c request to localhost:<port> (as Caddy's h2listener scenario sends it) is refused by h1 alone and says HTTP/2.0 with h2c",
  sanitizeResources: false,
  async fn() {
    // its :authority is what Deno gives a request without Host, so only the connection's first
    // bytes tell it apart from HTTP/1
    const local = (name: string) => {
      const port = srv.ports(name)[0];
      return [`http://localhost:${port}/`, "--resolve", `localhost:${port}:127.0.0.1`];
    };
    const h2c = "--http2-prior-knowledge";
    const [h1, ...h1Args] = local("h1");
    assert.equal(await curlBody(h1, ...h1Args, h2c), "failed");
    assert.equal(
      await curlBody(h1, ...h1Args, "--http1.1"),
      "1.1 200 {http.request.tls.proto} HTTP/1.1",
    );
    const [both, ...bothArgs] = local("h2c_h1");
    assert.equal(
      await curlBody(both, ...bothArgs, h2c),
      "2 200 {http.request.tls.proto} HTTP/2.0",
    );
    assert.equal(
      await curlBody(both, ...bothArgs, "--http1.1"),
      "1.1 200 {http.request.tls.proto} HTTP/1.1",
    );
  },
});

Deno.test({
  name: "fields: h2 alone, h1 alone and both on a TLS listener, as Caddy's h2listener scenario",
  sanitizeResources: false,
  async fn() {
    const tlsUrl = (name: string) => `https://localhost:${srv.ports(name)[0]}/`;
    assert.equal(await curlBody(tlsUrl("tls_h2_only"), "--http2"), "2 200 h2 HTTP/2.0");
    assert.equal(await curlBody(tlsUrl("tls_h2_only"), "--http1.1"), "failed");
    // a client that offers no ALPN speaks HTTP/1.1: closed without an answer
    assert.equal(await curlBody(tlsUrl("tls_h2_only"), "--http1.1", "--no-alpn"), "failed");
    assert.equal(await curlBody(tlsUrl("tls_h1_proto"), "--http1.1"), "1.1 200 http/1.1 HTTP/1.1");
    assert.equal(await curlBody(tlsUrl("tls_h2_h1"), "--http2"), "2 200 h2 HTTP/2.0");
    assert.equal(await curlBody(tlsUrl("tls_h2_h1"), "--http1.1"), "1.1 200 http/1.1 HTTP/1.1");
  },
});

Deno.test({
  name: "fields: Caddy 2.6.2 agrees on h1 alone and h1 h2c over cleartext",
  ignore: !caddyAvailable(),
  sanitizeResources: false,
  async fn() {
    const h2c = "--http2-prior-knowledge";
    const h1 = await startCaddy(proto, { protocols: ["h1"] });
    const both = await startCaddy(proto, { protocols: ["h1", "h2c"] });
    try {
      assert.equal(await curlBody(`${h1.url}/`, h2c), await curlBody(http("h1"), h2c));
      assert.equal(
        await curlBody(`${h1.url}/`, "--http1.1"),
        await curlBody(http("h1"), "--http1.1"),
      );
      assert.equal(await curlBody(`${both.url}/`, h2c), await curlBody(http("h2c_h1"), h2c));
    } finally {
      await h1.stop();
      await both.stop();
    }
  },
});

Deno.test({
  name: "fields: stop the protocols server",
  sanitizeResources: false,
  fn: () => srv.stop(),
});
