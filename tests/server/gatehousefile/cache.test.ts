/**
 * The `cache` directive and global option: caddyserver/cache-handler's Caddyfile syntax
 * (README.md "Minimal Configuration", "Cache directive Syntax"; configuration.go
 * parseConfiguration, with its messages), its place in the default order (httpcache.go
 * registers it before rewrite), and the JSON → Gatehousefile direction.
 */
import assert from "node:assert/strict";
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { reverseConfig } from "../../../lib/server/adapters/gatehousefile/reverse/mod.ts";
import { noFiles } from "../../../lib/server/caddyfile/files.ts";
import { validateConfig } from "../../../lib/cli/validate.ts";

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

Deno.test("cache directive: the README's minimal configuration (global option and directive)", async () => {
  const c = adapt(`{
	cache
}

example.com {
	cache
	reverse_proxy your-app:8080
}
`);
  assert.deepEqual(c.apps.cache, {});
  assert.deepEqual(handlers(c).map((h) => h.handler), ["cache", "reverse_proxy"]);
  assert.deepEqual(handlers(c)[0], { handler: "cache" });
  await validateConfig({ admin: { disabled: true }, apps: { cache: c.apps.cache } });
});

Deno.test("cache directive: the common options, and the global option's", () => {
  const c = adapt(`{
	cache {
		allowed_http_verbs GET POST
		ttl 1000s
		default_cache_control public
		regex {
			exclude /test2.*
		}
	}
}
:80 {
	@match path /path
	cache @match {
		cache_name ChangeName
		cache_keys {
			(host1|host2).*\\.css {
				disable_body
				disable_host
				disable_method
				disable_query
				headers X-Token Authorization
			}
		}
		key {
			disable_body
			disable_host
			disable_method
			disable_query
			headers Content-Type Authorization
		}
		stale 200s
		ttl 1000s
		default_cache_control no-store
		mode bypass_request
		max_cacheable_body_bytes 1048576
		allowed_additional_status_codes 202 400
		disable_coalescing
		disable_surrogate_key
		otter {
			configuration {
				size 999999
				max_bytes 256MB
			}
		}
	}
	respond ok
}
`);
  assert.deepEqual(c.apps.cache, {
    allowed_http_verbs: ["GET", "POST"],
    default_cache_control: "public",
    regex: { exclude: "/test2.*" },
    ttl: "1000s",
  });
  const route = c.apps.http.servers.srv0.routes[0];
  assert.deepEqual(route.match, [{ path: ["/path"] }]);
  assert.deepEqual(route.handle[0], {
    handler: "cache",
    allowed_additional_status_codes: [202, 400],
    cache_name: "ChangeName",
    default_cache_control: "no-store",
    key: {
      disable_body: true,
      disable_host: true,
      disable_method: true,
      disable_query: true,
      headers: ["Content-Type", "Authorization"],
    },
    cache_keys: {
      "(host1|host2).*\\.css": {
        disable_body: true,
        disable_host: true,
        disable_method: true,
        disable_query: true,
        headers: ["X-Token", "Authorization"],
      },
    },
    max_cacheable_body_bytes: 1048576,
    mode: "bypass_request",
    stale: "200s",
    ttl: "1000s",
    otter: { configuration: { size: "999999", max_bytes: "256MB" } },
    disable_coalescing: true,
  });
  const s = adapt(`:80 {
	cache {
		simplefs {
			path /var/cache/gatehouse
			configuration {
				size 100000
				directory_size 10GB
			}
		}
		storers simplefs
	}
}
`);
  assert.deepEqual(handlers(s)[0], {
    handler: "cache",
    simplefs: {
      path: "/var/cache/gatehouse",
      configuration: { size: "100000", directory_size: "10GB" },
    },
    storers: ["simplefs"],
  });
});

Deno.test("cache directive: the plugin's messages, and refusals of what is not built in", () => {
  const bad: [string, string][] = [
    ["cache {\n\t\tbogus\n\t}", "unsupported root directive: bogus"],
    ["cache {\n\t\tkey {\n\t\t\tdisable_all\n\t\t}\n\t}", "unsupported key directive: disable_all"],
    ["cache {\n\t\tmode a b\n\t}", "mode must contains only one arg"],
    ["cache {\n\t\tapi {\n\t\t\tbasepath /x\n\t\t}\n\t}", "'api' block must be global"],
    [
      "cache {\n\t\tredis {\n\t\t\turl 127.0.0.1:6379\n\t\t}\n\t}",
      "the redis storage is not available",
    ],
    ["cache {\n\t\tttl soon\n\t}", "invalid duration 'soon'"],
    ["cache {\n\t\tmax_cacheable_body_bytes big\n\t}", "unsupported max_cacheable_body_bytes"],
    ["cache {\n\t\tallowed_additional_status_codes ok\n\t}", "not a status code: ok"],
    ["cache {\n\t\ttimeout {\n\t\t\tbackend 10s\n\t\t}\n\t}", "timeouts are the upstream's here"],
    ["cache {\n\t\tlog_level debug\n\t}", "log levels are set in the logging config"],
    ["cache {\n\t\tsimplefs {\n\t\t\turl x\n\t\t}\n\t}", "unsupported simplefs directive: url"],
    ["cache extra", "wrong argument count"],
  ];
  for (const [directive, message] of bad) {
    assert.throws(() => adapt(`:80 {\n\t${directive}\n}\n`), (e: Error) => {
      assert.ok(e.message.includes(message), `${directive}: ${e.message}`);
      return true;
    });
  }
  assert.throws(
    () => adapt("{\n\tcache {\n\t\tapi {\n\t\t\tprometheus\n\t\t}\n\t}\n}\n:80\n"),
    /the cache API is the admin API here/,
  );
});

Deno.test("cache directive: ordered before rewrite by default (the plugin's RegisterDirectiveOrder)", () => {
  const c = adapt(`:80 {
	reverse_proxy 127.0.0.1:9
	rewrite /a /b
	cache
	encode gzip
}
`);
  assert.deepEqual(handlers(c).map((h) => h.handler), [
    "cache",
    "rewrite",
    "encode",
    "reverse_proxy",
  ]);
});

Deno.test("cache writer: JSON → Gatehousefile → the same JSON", () => {
  const handler = {
    handler: "cache",
    allowed_http_verbs: ["GET", "HEAD"],
    default_cache_control: "max-age=30",
    key: { disable_query: true, hide: true, template: "{http.request.uri.path}" },
    mode: "strict",
    regex: { exclude: "^/api/" },
    stale: "1h",
    ttl: "2m",
    simplefs: { path: "/srv/cache", configuration: { directory_size: "1GB" } },
  };
  const config = {
    apps: { http: { servers: { srv0: { listen: [":8080"], routes: [{ handle: [handler] }] } } } },
  };
  const r = reverseConfig(config);
  assert.deepEqual(r.problems, []);
  assert.match(r.text, /\tcache \{\n/);
  assert.deepEqual(handlers(adapt(r.text))[0], handler);
});
