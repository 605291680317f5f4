/** caddytest/integration/stream_test.go */
import { h2Client } from "../../../parity2/_h2_client.ts";
import { h2cEcho, http } from "../_peers.ts";
import { check, init, json, request, type Scenario } from "../_scenario.ts";

const tlsApps = {
  tls: {
    certificates: {
      load_files: [{
        certificate: "/a.caddy.localhost.crt",
        key: "/a.caddy.localhost.key",
        tags: ["cert0"],
      }],
    },
  },
  pki: { certificate_authorities: { local: { install_trust: false } } },
};
const policies = [{
  certificate_selection: { any_tag: ["cert0"] },
  default_sni: "a.caddy.localhost",
}];

/**
 * GenerateRandomString(1024), without the digits (a digit run could read as one of Caddy's ports,
 * which the runner replaces in bodies).
 */
function randomString(n: number): string {
  const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-";
  return Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => letters[b % letters.length])
    .join("");
}
const large = randomString(1024);

export const scenarios: Scenario[] = [
  {
    // (see https://github.com/caddyserver/caddy/issues/3556 for the use case)
    name: "TestH2ToH2CStream",
    peers: { upstream: h2cEcho(54321, (env) => `127.0.0.1:${env.port(9443)}`) },
    steps: [
      init(json({
        admin: { listen: "localhost:2999" },
        apps: {
          http: {
            http_port: 9080,
            https_port: 9443,
            grace_period: 1,
            servers: {
              srv0: {
                listen: [":9443"],
                routes: [{
                  handle: [{
                    handler: "reverse_proxy",
                    transport: { protocol: "http", compression: false, versions: ["h2c", "2"] },
                    upstreams: [{ dial: "localhost:54321" }],
                  }],
                  match: [{ path: ["/tov2ray"] }],
                }],
                tls_connection_policies: policies,
              },
            },
          },
          ...tlsApps,
        },
      })),
      // an HTTP/2 PUT whose body is written once the response headers came: the proxy must
      // stream both ways
      check("the echo of a body sent after the response headers", async (ctx) => {
        const client = h2Client({ origin: `https://127.0.0.1:${ctx.port(9443)}`, insecure: true });
        try {
          const expected = "some data to be echoed";
          const r = await client.request({
            path: "/tov2ray",
            method: "PUT",
            headers: { "accept-encoding": "identity" },
            body: expected,
            afterResponse: true,
          });
          if (r.error) throw new Error(`failed to call server ${r.error}`);
          if (r.status !== 200) throw new Error(`expected status code: 200 but got ${r.status}`);
          if (!r.body?.includes(expected)) {
            throw new Error(`expected response body "${expected}" but got "${r.body}"`);
          }
        } finally {
          await client.close();
        }
      }),
    ],
  },
  {
    // (see https://github.com/caddyserver/caddy/issues/3606 for the use case)
    name: "TestH2ToH1ChunkedResponse",
    peers: {
      upstream: (env) =>
        http(async (req) => {
          const u = new URL(req.url);
          if (req.headers.get("host") !== `127.0.0.1:${env.port(9443)}`) {
            return new Response(null, { status: 404 });
          }
          if (!u.pathname.startsWith("/tov2ray")) return new Response(null, { status: 404 });
          const body = await req.arrayBuffer();
          if (!(req.headers.get("accept-encoding") ?? "").includes("gzip")) {
            return new Response(body);
          }
          const gz = new Blob([body]).stream().pipeThrough(new CompressionStream("gzip"));
          return new Response(gz, { headers: { "content-encoding": "gzip" } });
        }, { port: 54321 })(env),
    },
    steps: [
      init(json({
        admin: { listen: "localhost:2999" },
        logging: { logs: { default: { level: "DEBUG" } } },
        apps: {
          http: {
            http_port: 9080,
            https_port: 9443,
            grace_period: 1,
            servers: {
              srv0: {
                listen: [":9443"],
                routes: [{
                  handle: [{
                    handler: "subroute",
                    routes: [
                      { handle: [{ encodings: { gzip: {} }, handler: "encode" }] },
                      {
                        handle: [{
                          handler: "reverse_proxy",
                          upstreams: [{ dial: "localhost:54321" }],
                        }],
                        match: [{ path: ["/tov2ray"] }],
                      },
                    ],
                  }],
                  terminal: true,
                }],
                tls_connection_policies: policies,
              },
            },
          },
          ...tlsApps,
        },
      })),
      // a large body (over gzip's minimum length), streamed; Go's transport asks for gzip
      // itself and decodes the answer
      request({ url: "https://127.0.0.1:9443/tov2ray", body: large, stream: true }, {
        status: 200,
        body: large,
      }),
    ],
  },
];
