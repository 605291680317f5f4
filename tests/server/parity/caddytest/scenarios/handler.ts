/** caddytest/integration/handler_test.go */
import { caddyfile, init, request, type Scenario } from "../_scenario.ts";

const GLOBAL = `{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	https_port    9443
	grace_period  1ns
}
`;
const greeting = `{
		"greeting": "Hello, world!"
	}`;

export const scenarios: Scenario[] = [
  {
    name: "TestBrowse",
    steps: [
      init(caddyfile(`${GLOBAL}http://localhost:9080 {
	file_server browse
}
`)),
      request({ url: "http://localhost:9080/" }, { status: 200 }),
    ],
  },
  {
    name: "TestRespondWithJSON",
    steps: [
      init(caddyfile(`${GLOBAL}localhost {
	respond {http.request.body}
}
`)),
      request({ url: "https://localhost:9443/", body: greeting }, {
        status: 200,
        body: greeting,
        headers: { "Content-Type": "application/json" },
      }),
    ],
  },
];
