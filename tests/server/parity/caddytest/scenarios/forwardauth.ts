/** caddytest/integration/forwardauth_test.go */
import { http } from "../_peers.ts";
import { caddyfile, check, type Context, init, request, type Scenario } from "../_scenario.ts";

const site = (copy: string) =>
  caddyfile(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
}
http://localhost:9080 {
	forward_auth %[auth] {
		uri /
		copy_headers ${copy}
	}
	reverse_proxy %[backend]
}
`);

/** The auth service: a Bearer token passes (with `headers`), anything else is 401. */
const auth = (headers: Record<string, string> = {}) =>
  http((req) =>
    req.headers.get("authorization")?.startsWith("Bearer ")
      ? new Response(null, { headers })
      : new Response(null, { status: 401 })
  );
const backend = http(() => new Response("ok"));

/** What the backend got last in `names` (Go's `r.Header.Get`: "" when absent). */
const last = (ctx: Context, names: string[]) => {
  const h = ctx.peers.backend.seen.at(-1)?.headers ?? new Headers();
  return Object.fromEntries(names.map((n) => [n, h.get(n) ?? ""]));
};
const saw = (what: string, want: Record<string, string>) =>
  check(what, (ctx) => {
    const got = last(ctx, Object.keys(want));
    for (const [k, v] of Object.entries(want)) {
      if (got[k] !== v) {
        throw new Error(`${k}: want ${JSON.stringify(v)}, got ${JSON.stringify(got[k])}`);
      }
    }
  });
const url = "http://localhost:9080/";

export const scenarios: Scenario[] = [
  {
    name: "TestForwardAuthCopyHeadersStripsClientHeaders",
    peers: { auth: auth(), backend },
    steps: [
      init(site("X-User-Id X-User-Role")),
      // no token: refused, identity headers or not
      request({ url, headers: { "X-User-Id": "injected", "X-User-Role": "injected" } }, {
        status: 401,
      }),
      request({ url, headers: { Authorization: "Bearer token123" } }, { status: 200, body: "ok" }),
      saw("baseline", { "X-User-Id": "", "X-User-Role": "" }),
      request({
        url,
        headers: {
          Authorization: "Bearer token123",
          "X-User-Id": "admin",
          "X-User-Role": "superadmin",
        },
      }, { status: 200, body: "ok" }),
      saw("injection", { "X-User-Id": "", "X-User-Role": "" }),
    ],
  },
  {
    name: "TestForwardAuthCopyHeadersAuthResponseWins",
    peers: {
      auth: auth({ "X-User-Id": "service-user-42", "X-User-Role": "editor" }),
      backend,
    },
    steps: [
      init(site("X-User-Id X-User-Role")),
      request({
        url,
        headers: {
          Authorization: "Bearer token123",
          "X-User-Id": "forged-id",
          "X-User-Role": "forged-role",
        },
      }, { status: 200, body: "ok" }),
      saw("the auth service's values", { "X-User-Id": "service-user-42", "X-User-Role": "editor" }),
    ],
  },
  {
    name: "TestForwardAuthCopyHeadersUnderscoreAlias",
    peers: {
      auth: http(() => new Response(null, { headers: { "Remote-User": "alice" } })),
      backend,
    },
    steps: [
      init(site("Remote-User")),
      request({ url, headers: { Remote_user: "attacker", "Remote.user": "attacker" } }, {
        status: 200,
        body: "ok",
      }),
      saw("trusted Remote-User, aliases dropped", {
        "Remote-User": "alice",
        "Remote_user": "",
        "Remote.user": "",
      }),
    ],
  },
];
