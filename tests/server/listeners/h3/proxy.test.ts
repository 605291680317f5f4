/**
 * `reverse_proxy` to an HTTP/3 upstream (`transport http { versions 3 }`): requests reach an
 * HTTP/3 listener as HTTP/3 (fields, bodies both ways, one QUIC connection reused), an
 * upstream that is down is a 502, and the fields HTTP/3 cannot honour are refused by name.
 */
import assert from "node:assert/strict";
import { startServer } from "../../../../lib/server/embed.ts";
import { validateConfig } from "../../../../lib/cli/validate.ts";
import { freePort } from "../../fixtures/helpers.ts";
import { startH3, testPki } from "./_h3.ts";

function proxyConfig(
  port: number,
  upstream: number,
  ca: string,
  transport: Record<string, unknown> = {},
) {
  return {
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    apps: {
      http: {
        servers: {
          front: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            routes: [{
              handle: [{
                handler: "reverse_proxy",
                upstreams: [{ dial: `127.0.0.1:${upstream}` }],
                headers: { request: { set: { Host: ["localhost"] } } },
                transport: {
                  protocol: "http",
                  versions: ["3"],
                  tls: { root_ca_pem_files: [ca], server_name: "localhost" },
                  ...transport,
                },
              }],
            }],
          },
        },
      },
    },
  };
}

Deno.test("h3 proxy: requests go to the upstream over HTTP/3, bodies both ways", async () => {
  const p = await testPki();
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/ca.pem`, p.caPem);
  const seen: string[] = [];
  const upstream = await startH3(async (req, info) => {
    seen.push(`${info.tls?.proto} ${req.method} ${new URL(req.url).pathname}`);
    const body = req.method === "POST" ? new Uint8Array(await req.arrayBuffer()) : null;
    return new Response(body ?? `hello ${req.headers.get("x-forwarded-proto")}`, {
      headers: { "x-upstream": "h3", "set-cookie": "a=1" },
    });
  });
  const port = freePort();
  const srv = await startServer({ config: proxyConfig(port, upstream.port, `${dir}/ca.pem`) });
  try {
    const res = await fetch(`http://127.0.0.1:${port}/first`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-upstream"), "h3");
    assert.equal(res.headers.get("set-cookie"), "a=1");
    assert.equal(await res.text(), "hello http");
    const big = crypto.getRandomValues(new Uint8Array(65536));
    const up = new Uint8Array(2 * 1024 * 1024);
    for (let i = 0; i < up.length; i += big.length) up.set(big, i);
    const post = await fetch(`http://127.0.0.1:${port}/upload`, { method: "POST", body: up });
    assert.deepEqual(new Uint8Array(await post.arrayBuffer()), up);
    const many = await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) => fetch(`http://127.0.0.1:${port}/n${i}`).then((r) => r.text()),
      ),
    );
    assert.equal(many.length, 20);
    assert.deepEqual(seen.slice(0, 2), ["h3 GET /first", "h3 POST /upload"]);
    assert.equal(seen.length, 22);
    assert.equal(upstream.server.connections, 1, "one QUIC connection carries them all");
  } finally {
    await srv.stop();
    await upstream.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("h3 proxy: an HTTP/3 upstream that is not there is a 502", async () => {
  const p = await testPki();
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/ca.pem`, p.caPem);
  const port = freePort();
  const srv = await startServer({
    config: proxyConfig(port, freePort(), `${dir}/ca.pem`, { dial_timeout: "500ms" }),
  });
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(res.status, 502);
    await res.body?.cancel();
  } finally {
    await srv.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("h3 proxy: what HTTP/3 cannot honour is refused by name", async () => {
  const ca = "/nonexistent/ca.pem";
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ versions: ["3", "2"] }, /versions: .*cannot be combined with other versions/],
    [{ tls: undefined }, /versions: .*always TLS: add tls/],
    [
      { tls: { insecure_skip_verify: true } },
      /tls\.insecure_skip_verify: .*always checks the certificate/,
    ],
    [{ keep_alive: { enabled: true } }, /keep_alive: .*QUIC's idle timeout/],
    [{ max_conns_per_host: 4 }, /max_conns_per_host: .*one QUIC connection/],
  ];
  for (const [transport, re] of cases) {
    await assert.rejects(
      validateConfig(proxyConfig(8080, 8443, ca, transport)),
      re,
      JSON.stringify(transport),
    );
  }
});
