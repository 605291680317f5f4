/** caddytest/integration/sni_test.go */
import { adapt, get, init, json, type Scenario } from "../_scenario.ts";

const pki = { certificate_authorities: { local: { install_trust: false } } };
const version = (body: string) => ({
  handle: [{ body, handler: "static_response", status_code: 200 }],
  match: [{ path: ["/version"] }],
});
const files = (name: string) => ({
  certificates: {
    load_files: [{ certificate: `/${name}.crt`, key: `/${name}.key`, tags: ["cert0"] }],
  },
});
const server = (srv0: Record<string, unknown>, tls: Record<string, unknown>) =>
  json({
    admin: { listen: "localhost:2999" },
    apps: {
      http: { http_port: 9080, https_port: 9443, grace_period: 1, servers: { srv0 } },
      tls,
      pki,
    },
  });

export const scenarios: Scenario[] = [
  {
    name: "TestDefaultSNI",
    steps: [
      init(server({
        listen: [":9443"],
        routes: [{
          handle: [{ handler: "subroute", routes: [version("hello from a.caddy.localhost")] }],
          match: [{ host: ["127.0.0.1"] }],
          terminal: true,
        }],
        tls_connection_policies: [
          { certificate_selection: { any_tag: ["cert0"] }, match: { sni: ["127.0.0.1"] } },
          { default_sni: "*.caddy.localhost" },
        ],
      }, files("caddy.localhost"))),
      // a request with no SNI
      get("https://127.0.0.1:9443/version", 200, "hello from a.caddy.localhost"),
    ],
  },
  {
    name: "TestDefaultSNIWithNamedHostAndExplicitIP",
    steps: [
      init(server({
        listen: [":9443"],
        routes: [{
          handle: [{ handler: "subroute", routes: [version("hello from a")] }],
          match: [{ host: ["a.caddy.localhost", "127.0.0.1"] }],
          terminal: true,
        }],
        tls_connection_policies: [
          {
            certificate_selection: { any_tag: ["cert0"] },
            default_sni: "a.caddy.localhost",
            match: { sni: ["a.caddy.localhost", "127.0.0.1", ""] },
          },
          { default_sni: "a.caddy.localhost" },
        ],
      }, files("a.caddy.localhost"))),
      get("https://127.0.0.1:9443/version", 200, "hello from a"),
    ],
  },
  {
    name: "TestDefaultSNIWithPortMappingOnly",
    steps: [
      init(server({
        listen: [":9443"],
        routes: [version("hello from a.caddy.localhost")],
        tls_connection_policies: [
          { certificate_selection: { any_tag: ["cert0"] }, default_sni: "a.caddy.localhost" },
        ],
      }, files("a.caddy.localhost"))),
      get("https://127.0.0.1:9443/version", 200, "hello from a.caddy.localhost"),
    ],
  },
  {
    name: "TestHttpOnlyOnDomainWithSNI",
    steps: [adapt(
      `
	{
		skip_install_trust
		default_sni a.caddy.localhost
	}
	:80 {
		respond /version 200 {
			body "hello from localhost"
		}
	}
	`,
      JSON.stringify(
        {
          apps: {
            http: {
              servers: {
                srv0: {
                  listen: [":80"],
                  routes: [{
                    match: [{ path: ["/version"] }],
                    handle: [{
                      body: "hello from localhost",
                      handler: "static_response",
                      status_code: 200,
                    }],
                  }],
                },
              },
            },
            pki,
          },
        },
        null,
        "\t",
      ),
    )],
  },
];
