/** caddytest/integration/reverseproxy_test.go */
import { closer, hello, http } from "../_peers.ts";
import {
  caddyfile,
  check,
  get,
  init,
  json,
  loadError,
  request,
  type Scenario,
} from "../_scenario.ts";

const pki = { certificate_authorities: { local: { install_trust: false } } };

/** The global options most Caddyfiles here start with. */
const GLOBAL = `{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	https_port    9443
	grace_period 1ns
}
`;

const helloSite = {
  listen: [":18080"],
  routes: [{
    match: [{ host: ["localhost"] }],
    handle: [{ handler: "static_response", body: "Hello, World!" }],
    terminal: true,
  }],
  automatic_https: { skip: ["localhost"] },
};

const placeholderDial = (dial: string) =>
  json({
    admin: { listen: "localhost:2999" },
    apps: {
      pki,
      http: {
        grace_period: 1,
        servers: {
          srv0: helloSite,
          srv1: {
            listen: [":9080"],
            routes: [{
              match: [{ host: ["localhost"] }],
              handle: [{ handler: "reverse_proxy", upstreams: [{ dial }] }],
              terminal: true,
            }],
            automatic_https: { skip: ["localhost"] },
          },
        },
      },
    },
  });

/** An upstream answering `ok` on /health* and "Hello, World!" elsewhere (a unix socket). */
const healthAware = http(
  (req) => new Response(new URL(req.url).pathname.startsWith("/health") ? "ok" : "Hello, World!"),
  {
    unix: true,
  },
);

const retry = (expression: string) =>
  caddyfile(`${GLOBAL}
http://localhost:9080 {
	reverse_proxy %[good] %[bad] {
		lb_policy round_robin
		lb_retries 1
		lb_retry_match {
			expression \`${expression}\`
		}
	}
}
`);

const weighted = (weights: string) =>
  json(`{
	"apps": {"http": {"servers": {"srv0": {
		"listen": [":18080"],
		"routes": [{"handle": [{
			"handler": "reverse_proxy",
			"load_balancing": {"selection_policy": {"policy": "weighted_round_robin", "weights": ${weights}}},
			"upstreams": [{"dial": "localhost:18081"}, {"dial": "localhost:18082"}]
		}]}]
	}}}}
}`);

const sniTemplate = (versions: string) =>
  caddyfile(`{
	skip_install_trust
	local_certs
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
}
localhost example.com {
	@proxied header X-Transport caddy
	respond @proxied {http.request.tls.server_name}
	reverse_proxy 127.0.0.1:9443 {
		header_up X-Transport caddy
		header_up Host {host}
		transport http {
			versions ${versions}
			tls_server_name {header.X-SNI}
			tls_insecure_skip_verify
		}
	}
}
`);

export const scenarios: Scenario[] = [
  {
    name: "TestSRVReverseProxy",
    steps: [init(json({
      admin: { listen: "localhost:2999" },
      apps: {
        pki,
        http: {
          grace_period: 1,
          servers: {
            srv0: {
              listen: [":18080"],
              routes: [{
                handle: [{
                  handler: "reverse_proxy",
                  dynamic_upstreams: { source: "srv", name: "srv.host.service.consul" },
                }],
              }],
            },
          },
        },
      },
    }))],
  },
  {
    name: "TestDialWithPlaceholderUnix",
    peers: { sock: hello("Hello, World!", { unix: true }) },
    steps: [
      init(json({
        admin: { listen: "localhost:2999" },
        apps: {
          pki,
          http: {
            grace_period: 1,
            servers: {
              srv0: {
                listen: [":18080"],
                routes: [{
                  handle: [{
                    handler: "reverse_proxy",
                    upstreams: [{ dial: "unix/{http.request.header.X-Caddy-Upstream-Dial}" }],
                  }],
                }],
              },
            },
          },
        },
      })),
      request({ url: "http://localhost:18080", headers: { "X-Caddy-Upstream-Dial": "%[sock]" } }, {
        status: 200,
        body: "Hello, World!",
      }),
    ],
  },
  {
    name: "TestReverseProxyWithPlaceholderDialAddress",
    steps: [
      init(placeholderDial("{http.request.header.X-Caddy-Upstream-Dial}")),
      request({
        url: "http://localhost:9080",
        headers: { "X-Caddy-Upstream-Dial": "localhost:18080" },
      }, { status: 200, body: "Hello, World!" }),
    ],
  },
  {
    name: "TestReverseProxyWithPlaceholderTCPDialAddress",
    steps: [
      init(placeholderDial("tcp/{http.request.header.X-Caddy-Upstream-Dial}:18080")),
      request({ url: "http://localhost:9080", headers: { "X-Caddy-Upstream-Dial": "localhost" } }, {
        status: 200,
        body: "Hello, World!",
      }),
    ],
  },
  {
    name: "TestReverseProxyHealthCheck",
    peers: { hello: hello("Hello, World!", { port: 2020 }), health: hello("ok", { port: 2021 }) },
    steps: [
      init(caddyfile(`${GLOBAL}http://localhost:9080 {
	reverse_proxy {
		to localhost:2020

		health_uri /health
		health_port 2021
		health_interval 10ms
		health_timeout 100ms
		health_passes 1
		health_fails 1
	}
}
`)),
      get("http://localhost:9080/", 200, "Hello, World!"),
    ],
  },
  {
    name: "TestReverseProxyHealthCheckPortUsed",
    peers: {
      upstream: http(
        (req) =>
          new URL(req.url).pathname === "/health"
            ? new Response(null, { status: 503 })
            : new Response("Hello, World!"),
        { port: 2022 },
      ),
      health: hello("ok", { port: 2023 }),
    },
    steps: [
      init(caddyfile(`${GLOBAL}http://localhost:9080 {
	reverse_proxy {
		to localhost:2022

		health_uri /health
		health_port 2023
		health_interval 10ms
		health_timeout 100ms
		health_passes 1
		health_fails 1
	}
}
`)),
      get("http://localhost:9080/", 200, "Hello, World!"),
    ],
  },
  {
    name: "TestReverseProxyHealthCheckUnixSocket",
    peers: { sock: healthAware },
    steps: [
      init(caddyfile(`${GLOBAL}http://localhost:9080 {
	reverse_proxy {
		to unix/%[sock]

		health_uri /health
		health_port 2021
		health_interval 2s
		health_timeout 5s
	}
}
`)),
      get("http://localhost:9080/", 200, "Hello, World!"),
    ],
  },
  {
    name: "TestReverseProxyHealthCheckUnixSocketWithoutPort",
    peers: { sock: healthAware },
    steps: [
      init(caddyfile(`${GLOBAL}http://localhost:9080 {
	reverse_proxy {
		to unix/%[sock]

		health_uri /health
		health_interval 2s
		health_timeout 5s
	}
}
`)),
      get("http://localhost:9080/", 200, "Hello, World!"),
    ],
  },
  {
    name: "TestReverseProxyRetryMatchStatusCode",
    peers: { bad: http(() => new Response(null, { status: 502 })), good: hello("ok") },
    steps: [
      init(retry("{rp.status_code} in [502, 503]")),
      get("http://localhost:9080/", 200, "ok"),
    ],
  },
  {
    name: "TestReverseProxyRetryMatchHeader",
    peers: {
      bad: http(() => new Response("bad", { headers: { "X-Upstream-Retry": "true" } })),
      good: hello("good"),
    },
    steps: [
      init(retry('{rp.header.X-Upstream-Retry} == "true"')),
      get("http://localhost:9080/", 200, "good"),
      check("bad upstream hits", (ctx) => {
        const hits = ctx.peers.bad.seen.length;
        if (hits !== 1) throw new Error(`got ${hits}, want 1`);
      }),
    ],
  },
  {
    name: "TestReverseProxyRetryMatchCombined",
    peers: { bad: http(() => new Response(null, { status: 502 })), good: hello("ok") },
    steps: [
      init(retry("path('/retry*') && {rp.status_code} in [502, 503]")),
      get("http://localhost:9080/retry", 200, "ok"),
      get("http://localhost:9080/other", 502, ""),
    ],
  },
  {
    name: "TestReverseProxyRetryMatchIsTransportError",
    peers: { good: hello("ok"), bad: closer() },
    steps: [
      init(retry("{rp.is_transport_error} || {rp.status_code} in [502, 503]")),
      get("http://localhost:9080/", 200, "ok"),
    ],
  },
  {
    name: "TestReverseProxySNIPlaceHolder",
    steps: ["1.1 2", "3"].flatMap((versions) => [
      init(sniTemplate(versions)),
      request({ url: "https://localhost:9443", headers: { "X-SNI": "example.com" } }, {
        status: 200,
        body: "example.com",
      }),
    ]),
  },
  {
    name: "TestWeightedRoundRobinSelectionValidation",
    steps: [
      loadError(weighted("[-1, 2]"), "weight of an upstream cannot be negative"),
      loadError(weighted("[0, 0]"), "requires at least one upstream with a positive weight"),
    ],
  },
];
