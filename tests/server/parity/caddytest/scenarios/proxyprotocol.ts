/** caddytest/integration/proxyprotocol_test.go */
import { proxyProtoBackend } from "../_peers.ts";
import { caddyfile, check, init, json, request, type Scenario, type Step } from "../_scenario.ts";

type Versions = string[];

/**
 * `proxyProtoConfig`/`proxyProtoTLSConfig`: a proxy on a free port (the Go test's `freePort`;
 * 18080's here) to the backend with the PROXY protocol version and transport versions given.
 */
const config = (pp: string, versions: Versions, tls: boolean) =>
  json({
    admin: { listen: "localhost:2999" },
    apps: {
      pki: { certificate_authorities: { local: { install_trust: false } } },
      http: {
        grace_period: 1,
        servers: {
          proxy: {
            listen: [":18080"],
            automatic_https: { disable: true },
            routes: [{
              handle: [{
                handler: "reverse_proxy",
                upstreams: [{ dial: "%[backend]" }],
                transport: {
                  protocol: "http",
                  proxy_protocol: pp,
                  versions,
                  ...(tls ? { tls: { insecure_skip_verify: true } } : {}),
                },
              }],
            }],
          },
        },
      },
    },
  });

/**
 * `testProxyProtocolMatrix`/`testTLSProxyProtocolMatrix`: `n` GETs through the proxy answer
 * 200 (over h2c when the upstream speaks h2c alone, as the Go test's client then does), and
 * the backend saw at least one PROXY header, every one with the source 127.0.0.1.
 */
function matrix(pp: string, versions: Versions, n: number, tls = false): Step[] {
  const h2c = !tls && versions.includes("h2c") && !versions.includes("1.1");
  return [
    init(config(pp, versions, tls)),
    ...Array.from(
      { length: n },
      () =>
        request({ url: "http://127.0.0.1:18080/", ...(h2c ? { proto: "h2c" as const } : {}) }, {
          status: 200,
        }),
    ),
    check("the PROXY headers the backend got", (ctx) => {
      const sources = ctx.peers.backend.sources;
      if (sources.length === 0) {
        throw new Error("backend recorded no PROXY protocol addresses (expected at least 1)");
      }
      for (const [i, s] of sources.entries()) {
        const host = s.slice(0, s.lastIndexOf(":"));
        if (host !== "127.0.0.1") {
          throw new Error(`addr[${i}]: expected source 127.0.0.1, got ${s}`);
        }
      }
    }),
  ];
}

const plain = { backend: proxyProtoBackend() };
const tls = { backend: proxyProtoBackend({ tls: true }) };

/** The PROXY v2 header go-proxyproto writes for 10.0.0.1:1234 -> 127.0.0.1:<port>. */
function v2Header(dstPort: number): Uint8Array {
  const sig = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
  return new Uint8Array([
    ...sig,
    0x21, // version 2, PROXY
    0x11, // TCP over IPv4
    0x00,
    12,
    10,
    0,
    0,
    1,
    127,
    0,
    0,
    1,
    1234 >> 8,
    1234 & 0xff,
    dstPort >> 8,
    dstPort & 0xff,
  ]);
}

export const scenarios: Scenario[] = [
  { name: "TestProxyProtocolV1WithH1", peers: plain, steps: matrix("v1", ["1.1"], 1) },
  { name: "TestProxyProtocolV2WithH1", peers: plain, steps: matrix("v2", ["1.1"], 1) },
  { name: "TestProxyProtocolV1WithH2C", peers: plain, steps: matrix("v1", ["h2c"], 1) },
  { name: "TestProxyProtocolV2WithH2C", peers: plain, steps: matrix("v2", ["h2c"], 1) },
  {
    name: "TestProxyProtocolV2WithH2CMultipleRequests",
    peers: plain,
    steps: matrix("v2", ["h2c"], 5),
  },
  { name: "TestProxyProtocolV1WithH2", peers: tls, steps: matrix("v1", ["2"], 1, true) },
  { name: "TestProxyProtocolV2WithH2", peers: tls, steps: matrix("v2", ["2"], 1, true) },
  {
    // the Go test's subtests, each with a backend of its own: h1-v1, h1-v2, h2c-v1, h2c-v2,
    // then h2-v1 and h2-v2 over TLS
    name: "TestProxyProtocolServerAndProxy",
    peers: {
      backend: proxyProtoBackend(),
      b2: proxyProtoBackend(),
      b3: proxyProtoBackend(),
      b4: proxyProtoBackend(),
      b5: proxyProtoBackend({ tls: true }),
      b6: proxyProtoBackend({ tls: true }),
    },
    steps: ([
      ["backend", "v1", ["1.1"], false],
      ["b2", "v2", ["1.1"], false],
      ["b3", "v1", ["h2c"], false],
      ["b4", "v2", ["h2c"], false],
      ["b5", "v1", ["2"], true],
      ["b6", "v2", ["2"], true],
    ] as [string, string, Versions, boolean][]).flatMap(([peer, pp, versions, tls]) =>
      matrix(pp, versions, 3, tls).map((step) => onPeer(step, peer))
    ),
  },
  {
    name: "TestProxyProtocolListenerWrapper",
    steps: [
      init(caddyfile(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
	servers :9080 {
		listener_wrappers {
			proxy_protocol {
				timeout 5s
				allow 127.0.0.0/8
			}
		}
	}
}
http://localhost:9080 {
	respond "{http.request.remote.host}"
}`)),
      check("a PROXY v2 header from 10.0.0.1:1234, then a GET", async (ctx) => {
        const port = ctx.port(9080);
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        try {
          await conn.write(v2Header(port));
          await conn.write(
            new TextEncoder().encode(
              "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            ),
          );
          // the Go test reads once; the whole answer here (Connection: close), however the
          // server splits its writes
          let raw = "";
          const buf = new Uint8Array(4096);
          for (let n; (n = await conn.read(buf).catch(() => null)) !== null;) {
            raw += new TextDecoder().decode(buf.subarray(0, n));
          }
          if (!raw.includes("10.0.0.1")) {
            throw new Error(
              `expected spoofed address 10.0.0.1 in response body; full response:\n${raw}`,
            );
          }
        } finally {
          conn.close();
        }
      }),
    ],
  },
];

/** The step with its `%[backend]` and its check pointed at the peer `name`. */
function onPeer(step: Step, name: string): Step {
  if ("init" in step) {
    return init({ ...step.init, text: step.init.text.replaceAll("%[backend]", `%[${name}]`) });
  }
  if ("check" in step) {
    return check(
      `${step.check} (${name})`,
      (ctx) => step.run({ ...ctx, peers: { ...ctx.peers, backend: ctx.peers[name] } }),
    );
  }
  return step;
}
