/** caddytest/integration/map_test.go */
import { caddyfile, get, init, json, request, type Scenario } from "../_scenario.ts";

const post = (url: string, body: string) => request({ url, body: "" }, { status: 200, body });

export const scenarios: Scenario[] = [
  {
    name: "TestMap",
    steps: [
      init(caddyfile(`{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	https_port    9443
	grace_period  1ns
}

localhost:9080 {

	map {http.request.method} {dest-1} {dest-2} {
		default unknown1    unknown2
		~G(.)(.)    G\${1}\${2}-called
		POST    post-called foobar
	}

	respond /version 200 {
		body "hello from localhost {dest-1} {dest-2}"
	}
}
`)),
      get("http://localhost:9080/version", 200, "hello from localhost GET-called unknown2"),
      post("http://localhost:9080/version", "hello from localhost post-called foobar"),
    ],
  },
  {
    name: "TestMapRespondWithDefault",
    steps: [
      init(caddyfile(`{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	https_port    9443
}

localhost:9080 {

	map {http.request.method} {dest-name} {
		default unknown
		GET     get-called
	}

	respond /version 200 {
		body "hello from localhost {dest-name}"
	}
}
`)),
      get("http://localhost:9080/version", 200, "hello from localhost get-called"),
      post("http://localhost:9080/version", "hello from localhost unknown"),
    ],
  },
  {
    name: "TestMapAsJSON",
    steps: [
      init(json({
        admin: { listen: "localhost:2999" },
        apps: {
          pki: { certificate_authorities: { local: { install_trust: false } } },
          http: {
            http_port: 9080,
            https_port: 9443,
            servers: {
              srv0: {
                listen: [":9080"],
                routes: [{
                  handle: [{
                    handler: "subroute",
                    routes: [
                      {
                        handle: [{
                          handler: "map",
                          source: "{http.request.method}",
                          destinations: ["{dest-name}"],
                          defaults: ["unknown"],
                          mappings: [
                            { input: "GET", outputs: ["get-called"] },
                            { input: "POST", outputs: ["post-called"] },
                          ],
                        }],
                      },
                      {
                        handle: [{
                          body: "hello from localhost {dest-name}",
                          handler: "static_response",
                          status_code: 200,
                        }],
                        match: [{ path: ["/version"] }],
                      },
                    ],
                  }],
                  match: [{ host: ["localhost"] }],
                  terminal: true,
                }],
              },
            },
          },
        },
      })),
      get("http://localhost:9080/version", 200, "hello from localhost get-called"),
      post("http://localhost:9080/version", "hello from localhost post-called"),
    ],
  },
];
