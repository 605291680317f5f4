/** caddytest/integration/h2listener_test.go */
import { h2Client } from "../../../parity2/_h2_client.ts";
import { caddyfile, check, get, init, request, type Scenario, type Step } from "../_scenario.ts";

const withTLS = (versions: string) =>
  caddyfile(`{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	https_port    9443
	servers :9443 {
		protocols ${versions}
	}
}
localhost {
	respond "{http.request.tls.proto} {http.request.proto}"
}
`);
const withoutTLS = (versions: string) =>
  caddyfile(`{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	servers :9080 {
		protocols ${versions}
	}
}
http://localhost {
	respond "{http.request.proto}"
}
`);

/** A client offering only `h2` by ALPN (Go's `NextProtos = ["h2"]`, HTTP/1 off). */
const h2Only = (body: string | null): Step =>
  check(`GET https://localhost:9443 offering h2 alone: ${body ?? "no answer"}`, async (ctx) => {
    const port = ctx.port(9443);
    const client = h2Client({
      origin: `https://127.0.0.1:${port}`,
      servername: "localhost",
      insecure: true,
    });
    try {
      const r = await client.request({ path: "/", authority: `localhost:${port}` });
      if (body === null) {
        if (!r.error) throw new Error(`unexpected response: ${r.status}`);
      } else if (r.error) {
        throw new Error(`failed to call server ${r.error}`);
      } else if (r.status !== 200 || r.body !== body) {
        throw new Error(`expected 200 "${body}" but got ${r.status} "${r.body}"`);
      }
    } finally {
      await client.close();
    }
  });
const h1 = (url: string, body: string | null) =>
  body === null
    ? request({ url, proto: "h1" }, { fails: true })
    : request({ url, proto: "h1" }, { status: 200, body });
const h2c = (url: string, body: string | null) =>
  body === null
    ? request({ url, proto: "h2c" }, { fails: true })
    : request({ url, proto: "h2c" }, { status: 200, body });

const TLS = "https://localhost:9443";
const PLAIN = "http://localhost:9080";

export const scenarios: Scenario[] = [
  {
    name: "TestH2ListenerWithTLS",
    steps: [
      init(withTLS("h2")),
      h2Only("h2 HTTP/2.0"),
      h1(TLS, null),
      init(withTLS("h1")),
      h1(TLS, "http/1.1 HTTP/1.1"),
      h2Only(null),
      init(withTLS("h2 h1")),
      h2Only("h2 HTTP/2.0"),
      h1(TLS, "http/1.1 HTTP/1.1"),
    ],
  },
  {
    name: "TestH2ListenerWithoutTLS",
    steps: [
      init(withoutTLS("h2c")),
      h2c(PLAIN, "HTTP/2.0"),
      h1(PLAIN, null),
      init(withoutTLS("h1")),
      h1(PLAIN, "HTTP/1.1"),
      h2c(PLAIN, null),
      init(withoutTLS("h2c h1")),
      h2c(PLAIN, "HTTP/2.0"),
      get(PLAIN, 200, "HTTP/1.1"),
    ],
  },
];
