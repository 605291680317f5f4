/** caddytest/integration/listener_test.go */
import { http } from "../_peers.ts";
import { caddyfile, check, init, request, type Scenario } from "../_scenario.ts";

/** `setupListenerWrapperTest`: http_redirect and tls wrappers on :9443, proxying to `up`. */
const site = caddyfile(`{
	skip_install_trust
	admin localhost:2999
	http_port     9080
	https_port    9443
	local_certs
	servers :9443 {
		listener_wrappers {
			http_redirect
			tls
		}
	}
}
localhost {
	reverse_proxy %[up]
}
`);

/** 1 MiB and a byte of pseudo-random data (the Go test's ChaCha8 stream, any bytes will do). */
const upload = (() => {
  const b = new Uint8Array(1024 * 1024 + 1);
  for (let i = 0; i < b.length; i += 65536) crypto.getRandomValues(b.subarray(i, i + 65536));
  return b;
})();

const same = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

export const scenarios: Scenario[] = [
  {
    name: "TestHTTPRedirectWrapperWithLargeUpload",
    peers: {
      up: http(async (req) =>
        new Response(null, {
          status: same(new Uint8Array(await req.arrayBuffer()), upload) ? 204 : 500,
        })
      ),
    },
    steps: [
      init(site),
      request({
        url: "https://localhost:9443",
        headers: { "Content-Type": "application/octet-stream" },
        body: upload,
      }, { status: 204 }),
    ],
  },
  {
    name: "TestLargeHttpRequest",
    peers: { up: http(() => new Response("not supposed to handle a request", { status: 500 })) },
    steps: [
      init(site),
      // plain HTTP on the TLS port with a 1 MiB header: no answer
      request({
        method: "POST",
        url: "http://localhost:9443",
        headers: { "Long-Header": "X".repeat(1024 * 1024) },
      }, { fails: true }),
      check("the upstream got no request", (ctx) => {
        if (ctx.peers.up.seen.length) throw new Error("not supposed to handle a request");
      }),
    ],
  },
];
