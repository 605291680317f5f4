/**
 * The `rate_limit` directive: caddy-ratelimit's Caddyfile syntax (README.md "Caddyfile config",
 * caddyfile.go UnmarshalCaddyfile), its messages, its place in the default directive order
 * (caddyfile.go registers it before basic_auth), and the JSON → Gatehousefile direction.
 */
import assert from "node:assert/strict";
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { reverseConfig } from "../../../lib/server/adapters/gatehousefile/reverse/mod.ts";
import { noFiles } from "../../../lib/server/caddyfile/files.ts";

// deno-lint-ignore no-explicit-any
type J = Record<string, any>;

function adapt(src: string): J {
  return adaptGatehousefile(src, {
    filename: "Gatehousefile",
    files: noFiles,
    env: () => undefined,
  })
    .result as J;
}
const handlers = (c: J): J[] =>
  c.apps.http.servers.srv0.routes.flatMap((r: J) => r.handle).flatMap((h: J) =>
    h.handler === "subroute" ? h.routes.flatMap((r: J) => r.handle) : [h]
  );

Deno.test("rate_limit directive: the README's example adapts to the README's JSON", () => {
  const c = adapt(`:80

rate_limit {
	distributed
	zone static_example {
		match {
			method GET
		}
		key    static
		events 100
		window 1m
	}
	zone dynamic_example {
		key    {remote_host}
		events 2
		window 5s
	}
	log_key
}

respond "I'm behind the rate limiter!"
`);
  assert.deepEqual(handlers(c)[0], {
    handler: "rate_limit",
    rate_limits: {
      static_example: {
        match: [{ method: ["GET"] }],
        key: "static",
        max_events: 100,
        window: 60_000_000_000,
      },
      dynamic_example: {
        key: "{http.request.remote.host}",
        max_events: 2,
        window: 5_000_000_000,
      },
    },
    distributed: {},
    log_key: true,
  });
});

Deno.test("rate_limit directive: every subdirective", () => {
  const c = adapt(`:80
rate_limit /api/* {
	zone z {
		key {header.X-User}
		window 10s
		events 5
		ipv4_prefix 24
		ipv6_prefix 64
		match {
			path /api/login
		}
		match {
			method POST
		}
	}
	distributed {
		read_interval 2s
		write_interval 3s
		purge_age 1h
	}
	disable_metrics
	jitter 0.25
	sweep_interval 30s
	storage file_system /var/lib/rl
}
`);
  const route = c.apps.http.servers.srv0.routes[0];
  assert.deepEqual(route.match, [{ path: ["/api/*"] }]);
  assert.deepEqual(route.handle[0], {
    handler: "rate_limit",
    rate_limits: {
      z: {
        match: [{ path: ["/api/login"] }, { method: ["POST"] }],
        key: "{http.request.header.X-User}",
        max_events: 5,
        window: 10_000_000_000,
        ipv4_prefix: 24,
        ipv6_prefix: 64,
      },
    },
    jitter: 0.25,
    sweep_interval: 30_000_000_000,
    distributed: {
      read_interval: 2_000_000_000,
      write_interval: 3_000_000_000,
      purge_age: 3_600_000_000_000,
    },
    storage: { root: "/var/lib/rl", module: "file_system" },
    disable_metrics: true,
  });
});

Deno.test("rate_limit directive: the plugin's messages", () => {
  const bad: [string, string][] = [
    ["rate_limit foo bar", "wrong argument count"],
    [
      "rate_limit {\n\t\tzone z {\n\t\t\tkey a\n\t\t}\n\t}",
      "a rate limit zone requires both a window and maximum events",
    ],
    [
      "rate_limit {\n\t\tzone z {\n\t\t\twindow 1x\n\t\t}\n\t}",
      "invalid window duration '1x': time: unknown unit",
    ],
    [
      "rate_limit {\n\t\tzone z {\n\t\t\tevents many\n\t\t}\n\t}",
      `invalid max events integer 'many': strconv.Atoi: parsing "many": invalid syntax`,
    ],
    [
      "rate_limit {\n\t\tzone z {\n\t\t\tkey a\n\t\t\tkey b\n\t\t}\n\t}",
      "zone key already specified: a",
    ],
    ["rate_limit {\n\t\tzone z {\n\t\t\tburst 1\n\t\t}\n\t}", "unrecognized subdirective 'burst'"],
    ["rate_limit {\n\t\tjitter lots\n\t}", "invalid jitter percentage 'lots'"],
    [
      "rate_limit {\n\t\tdistributed {\n\t\t\tread_interval x\n\t\t}\n\t}",
      "invalid read interval 'x'",
    ],
    ["rate_limit {\n\t\tlog_key yes\n\t}", "wrong argument count"],
    ["rate_limit {\n\t\tbogus\n\t}", "unrecognized subdirective 'bogus'"],
  ];
  for (const [directive, message] of bad) {
    assert.throws(() => adapt(`:80 {\n\t${directive}\n}\n`), (e: Error) => {
      assert.ok(e.message.includes(message), `${directive}: ${e.message}`);
      assert.match(e.message, /Gatehousefile:\d+/);
      return true;
    });
  }
});

Deno.test("rate_limit directive: ordered before basic_auth by default; `order rate_limit before basicauth` still works", () => {
  const site = `:80 {
	respond ok
	basic_auth {
		bob $2a$14$Zkx19XLiW6VYouLHR5NmfOFU0z2GTNmpkT/5qqR7hx4IjWJPDhjvG
	}
	rate_limit {
		zone z {
			key static
			events 1
			window 1s
		}
	}
}
`;
  const order = (c: J) => handlers(c).map((h) => h.handler);
  assert.deepEqual(order(adapt(site)), ["rate_limit", "authentication", "static_response"]);
  assert.deepEqual(
    order(adapt(`{\n\torder rate_limit before basicauth\n}\n${site}`)),
    ["rate_limit", "authentication", "static_response"],
  );
  assert.deepEqual(
    order(adapt(`{\n\torder rate_limit after basic_auth\n}\n${site}`)),
    ["authentication", "rate_limit", "static_response"],
  );
});

Deno.test("rate_limit writer: JSON → Gatehousefile → the same JSON", () => {
  const handler = {
    handler: "rate_limit",
    rate_limits: {
      login: {
        match: [{ path: ["/login"] }],
        key: "{http.request.remote.host}",
        max_events: 5,
        window: 60_000_000_000,
        ipv6_prefix: 64,
      },
    },
    jitter: 0.5,
    distributed: { write_interval: 1_000_000_000 },
    log_key: true,
  };
  const config = {
    apps: { http: { servers: { srv0: { listen: [":8080"], routes: [{ handle: [handler] }] } } } },
  };
  const r = reverseConfig(config);
  assert.deepEqual(r.problems, []);
  assert.match(r.text, /rate_limit \{\n\t\tzone login \{/);
  assert.deepEqual(handlers(adapt(r.text))[0], handler);
});
