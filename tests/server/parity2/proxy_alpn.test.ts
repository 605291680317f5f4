/**
 * `transport http { versions 1.1 2 }` to TLS upstreams: each upstream chooses by ALPN, as Go's
 * transport with HTTP/2 configured (Caddy 2.6.2, the oracle: `http2.ConfigureTransport` offers
 * `h2` and `http/1.1`): an upstream that speaks HTTP/2 gets it, one that only speaks HTTP/1.1
 * gets that, each request of the same proxy. The upstreams are our own TLS servers, one with
 * `protocols h1` only, answering the version they were asked in.
 */
import assert from "node:assert/strict";
import { startServer } from "../../../lib/server/embed.ts";
import { freePort } from "../fixtures/helpers.ts";
import { makePki } from "../http/pki.ts";
import { raw } from "../http/raw.ts";
import { caddyAvailable, startCaddy } from "./caddy.ts";

const pki = await makePki({ up: { dns: ["localhost"], ip: ["127.0.0.1"] } });
const der = pki.caPem.replace(/-----[A-Z ]+-----|\s/g, "");

function frontRoutes(h2Port: number, h1Port: number) {
  const proxy = (path: string, port: number) => ({
    match: [{ path: [path] }],
    handle: [{
      handler: "reverse_proxy",
      upstreams: [{ dial: `127.0.0.1:${port}` }],
      transport: {
        protocol: "http",
        tls: { root_ca_pool: [der], server_name: "localhost" },
        versions: ["1.1", "2"],
      },
    }],
    terminal: true,
  });
  return [proxy("/h2", h2Port), proxy("/h1", h1Port)];
}

async function answers(base: string): Promise<string[]> {
  const out: string[] = [];
  for (const p of ["/h2", "/h1", "/h2", "/h1"]) {
    const r = await raw(base, "GET", p);
    out.push(`${r.status} ${r.text}`);
  }
  return out;
}

Deno.test("reverse_proxy: versions 1.1 2 choose HTTP/2 or HTTP/1.1 per TLS upstream by ALPN, as Caddy 2.6.2", async () => {
  const h2Port = freePort(), h1Port = freePort(), front = freePort();
  const echo = [{ handle: [{ handler: "static_response", body: "{http.request.proto}" }] }];
  const server = await startServer({
    config: {
      admin: { disabled: true },
      apps: {
        tls: {
          certificates: { load_pem: [{ certificate: pki.leafs.up.cert, key: pki.leafs.up.key }] },
        },
        http: {
          servers: {
            up_h2: {
              listen: [`127.0.0.1:${h2Port}`],
              tls_connection_policies: [{}],
              automatic_https: { disable: true },
              routes: echo,
            },
            up_h1: {
              listen: [`127.0.0.1:${h1Port}`],
              tls_connection_policies: [{}],
              protocols: ["h1"],
              automatic_https: { disable: true },
              routes: echo,
            },
            front: {
              listen: [`127.0.0.1:${front}`],
              automatic_https: { disable: true },
              routes: frontRoutes(h2Port, h1Port),
            },
          },
        },
      },
    },
  });
  try {
    const ours = await answers(`http://127.0.0.1:${front}`);
    assert.deepEqual(ours, ["200 HTTP/2.0", "200 HTTP/1.1", "200 HTTP/2.0", "200 HTTP/1.1"]);
    if (caddyAvailable()) {
      const caddy = await startCaddy(frontRoutes(h2Port, h1Port));
      try {
        assert.deepEqual(ours, await answers(caddy.url), "as Caddy 2.6.2");
      } finally {
        await caddy.stop();
      }
    }
  } finally {
    await server.stop();
  }
});
