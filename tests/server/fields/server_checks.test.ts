/**
 * Request-level server fields on a running process: `strict_sni_host` (421 when Host and SNI
 * differ, on TLS only), `enable_full_duplex` (a request body read while its response streams,
 * on both engines), `client_ip_headers` and `trusted_proxies_strict`.
 */
import assert from "node:assert/strict";
import { makePki } from "../http/pki.ts";
import { oneResponse, RawConn, runServer } from "./_server.ts";

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
const hostBody = [{ handle: [{ handler: "static_response", body: "host {http.request.host}" }] }];
const clientIp = [{
  handle: [{ handler: "static_response", body: "{http.vars.client_ip}" }],
}];

// streams back each chunk of the request body as it arrives
const upstream = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {} },
  (req) => new Response(req.body),
);
const up = `127.0.0.1:${(upstream.addr as Deno.NetAddr).port}`;
// flush_interval: every chunk is flushed as it arrives, so any interval is met
const echo = [{
  handle: [{ handler: "reverse_proxy", upstreams: [{ dial: up }], flush_interval: "10s" }],
}];
const trusted = { source: "static", ranges: ["127.0.0.0/8", "10.0.0.0/8"] };

const srv = await runServer({
  servers: {
    strict: {
      listen: ["127.0.0.1:0"],
      strict_sni_host: true,
      tls_connection_policies: [{}],
      routes: hostBody,
    },
    lax: { listen: ["127.0.0.1:0"], tls_connection_policies: [{}], routes: hostBody },
    plain_strict: { listen: ["127.0.0.1:0"], strict_sni_host: true, routes: hostBody },
    duplex: { listen: ["127.0.0.1:0"], enable_full_duplex: true, routes: echo },
    duplex_node: {
      listen: ["127.0.0.1:0"],
      enable_full_duplex: true,
      listener_engine: "node",
      routes: echo,
    },
    ips: {
      listen: ["127.0.0.1:0"],
      trusted_proxies: trusted,
      client_ip_headers: ["X-Real-Client", "X-Forwarded-For"],
      routes: clientIp,
    },
    ips_strict: {
      listen: ["127.0.0.1:0"],
      trusted_proxies: trusted,
      trusted_proxies_strict: 1,
      routes: clientIp,
    },
  },
}, { tls: tlsApp });
const port = (name: string) => srv.ports(name)[0];
const dec = new TextDecoder();

/** One HTTPS request with SNI `sni` and Host `host`; the raw answer. */
async function tlsAsk(name: string, sni: string, host: string): Promise<string> {
  const tcp = await Deno.connect({ hostname: "127.0.0.1", port: port(name) });
  const t = await Deno.startTls(tcp, { hostname: sni, caCerts: [pki.caPem] });
  await t.write(new TextEncoder().encode(`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`));
  let text = "";
  const buf = new Uint8Array(4096);
  for (let n; (n = await t.read(buf)) !== null;) {
    text += dec.decode(buf.subarray(0, n));
    if (oneResponse({ text, closed: false })) break;
  }
  t.close();
  return text;
}

Deno.test({
  name: "fields: strict_sni_host answers 421 when Host and SNI differ, on TLS connections",
  sanitizeResources: false,
  async fn() {
    assert.match(
      await tlsAsk("strict", "localhost", "localhost"),
      /^HTTP\/1\.1 200 [^]*host localhost$/,
    );
    const mis = await tlsAsk("strict", "localhost", "other.test");
    assert.match(mis, /^HTTP\/1\.1 421 /);
    assert.match(mis, /\r\nconnection: close\r\n/i);
    assert.match(await tlsAsk("strict", "other.test", "other.test"), /host other\.test$/);
    // without the field, any Host goes
    assert.match(
      await tlsAsk("lax", "localhost", "other.test"),
      /^HTTP\/1\.1 200 [^]*other\.test$/,
    );
    // plain HTTP has no SNI to compare (as in Caddy)
    const c = await RawConn.open(port("plain_strict"));
    await c.send("GET / HTTP/1.1\r\nHost: other.test\r\n\r\n");
    assert.match((await c.until(oneResponse)).text, /^HTTP\/1\.1 200 [^]*host other\.test$/);
    await c.close();
  },
});

/** Sends a chunked body piece by piece, each only after the previous one came back. */
async function pingPong(name: string): Promise<string[]> {
  const c = await RawConn.open(port(name));
  const echoed: string[] = [];
  try {
    await c.send(
      "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n",
    );
    for (const word of ["ping-1", "ping-2", "ping-3"]) {
      await c.send(`${word.length.toString(16)}\r\n${word}\r\n`);
      const r = await c.until((x) => x.text.includes(word), 5000);
      if (!r.text.includes(word)) break;
      echoed.push(word);
    }
    await c.send("0\r\n\r\n");
  } finally {
    await c.close();
  }
  return echoed;
}

Deno.test({
  name: "fields: enable_full_duplex: the response streams while the request body still arrives",
  sanitizeResources: false,
  async fn() {
    assert.deepEqual(await pingPong("duplex"), ["ping-1", "ping-2", "ping-3"]);
    assert.deepEqual(await pingPong("duplex_node"), ["ping-1", "ping-2", "ping-3"]);
  },
});

async function clientIP(name: string, headers: string): Promise<string> {
  const c = await RawConn.open(port(name));
  await c.send(`GET / HTTP/1.1\r\nHost: a\r\n${headers}Connection: close\r\n\r\n`);
  const r = await c.until(oneResponse);
  await c.close();
  return r.text.slice(r.text.indexOf("\r\n\r\n") + 4);
}

Deno.test({
  name: "fields: client_ip_headers are read in order; trusted_proxies_strict reads right to left",
  sanitizeResources: false,
  async fn() {
    assert.equal(await clientIP("ips", "X-Real-Client: 198.51.100.4\r\n"), "198.51.100.4");
    assert.equal(
      await clientIP("ips", "X-Forwarded-For: 203.0.113.1, 10.0.0.2\r\n"),
      "203.0.113.1",
      "left to right: the first valid address",
    );
    assert.equal(
      await clientIP("ips", "X-Real-Client: not-an-ip\r\nX-Forwarded-For: 192.0.2.9\r\n"),
      "192.0.2.9",
    );
    // strict: from the right, the first address that is not a trusted proxy
    assert.equal(
      await clientIP("ips_strict", "X-Forwarded-For: 203.0.113.1, 192.0.2.7, 10.0.0.2\r\n"),
      "192.0.2.7",
    );
    assert.equal(await clientIP("ips_strict", ""), "127.0.0.1");
  },
});

Deno.test({
  name: "fields: stop the checks server",
  sanitizeResources: false,
  async fn() {
    await srv.stop();
    await upstream.shutdown();
  },
});
