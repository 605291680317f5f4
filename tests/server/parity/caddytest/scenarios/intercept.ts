/** caddytest/integration/intercept_test.go */
import { caddyfile, get, init, type Scenario } from "../_scenario.ts";

const site = (body: string) =>
  caddyfile(`{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	https_port    9443
	grace_period  1ns
}

localhost:9080 {
${body}
}
`);

export const scenarios: Scenario[] = [
  {
    name: "TestIntercept",
    steps: [
      init(site(`	respond /intercept "I'm a teapot" 408
	header /intercept To-Intercept ok
	respond /no-intercept "I'm not a teapot"

	intercept {
		@teapot status 408
		handle_response @teapot {
			header /intercept intercepted {resp.header.To-Intercept}
			respond /intercept "I'm a combined coffee/tea pot that is temporarily out of coffee" 503
		}
	}`)),
      get(
        "http://localhost:9080/intercept",
        503,
        "I'm a combined coffee/tea pot that is temporarily out of coffee",
        { headers: { intercepted: "ok" } },
      ),
      get("http://localhost:9080/no-intercept", 200, "I'm not a teapot"),
    ],
  },
  {
    name: "TestInterceptReplaceStatusWithMatcher",
    steps: [
      init(site(`	respond /error "boom" 500

	intercept {
		@err status 5xx
		replace_status @err 200
	}`)),
      get("http://localhost:9080/error", 200, "boom"),
    ],
  },
  {
    name: "TestInterceptReplaceStatusWithoutMatcher",
    steps: [
      init(site(`	respond /forbidden "denied" 403

	intercept {
		replace_status 200
	}`)),
      get("http://localhost:9080/forbidden", 200, "denied"),
    ],
  },
  {
    name: "TestInterceptReplaceStatusNotMatched",
    steps: [
      init(site(`	respond /ok "all good" 200

	intercept {
		@err status 5xx
		replace_status @err 503
	}`)),
      // 200 does not match @err (5xx): the status passes through unchanged
      get("http://localhost:9080/ok", 200, "all good"),
    ],
  },
];
