/**
 * JSON → Gatehousefile for what the adapter expands into several parts — `php_fastcgi`,
 * `forward_auth`, site logs with `hostnames`, wrapping log encoders and time-based rolling,
 * `bind` protocols, `tls force_automate`: each Gatehousefile is adapted, reversed (the text
 * must be the directive as a person writes it) and adapted again to the same JSON; look-alike
 * JSON that is not an expansion is not taken for one.
 */
import assert from "node:assert/strict";
import { reverseConfig } from "../../../lib/server/adapters/gatehousefile/reverse/mod.ts";
import { ourAdapt } from "./_adapters.ts";

const adapt = ourAdapt();

/** `source` adapts, reverses to `expected` without problems, and `expected` adapts the same. */
async function writesBack(source: string, expected: string): Promise<unknown> {
  const json = await adapt!(source);
  const r = reverseConfig(json);
  assert.deepEqual(r.problems, [], r.text);
  assert.equal(r.text, expected);
  assert.deepEqual(await adapt!(r.text), json);
  return json;
}

const test = (name: string, fn: () => Promise<void>) => Deno.test({ name, ignore: !adapt, fn });

test("php_fastcgi is written back from its routes, with and without a matcher", async () => {
  const text = `example.com {
	root * /srv/app/public
	php_fastcgi /admin/* 127.0.0.1:9001 {
		resolve_root_symlink
		capture_stderr
		read_timeout 5s
		index admin.php
		lb_policy first
	}
	php_fastcgi unix//run/php/php-fpm.sock
}
`;
  await writesBack(text, text);
});

test("php_fastcgi try_files, split and env; a fastcgi reverse_proxy stays reverse_proxy", async () => {
  await writesBack(
    `:8080 {
	php_fastcgi 127.0.0.1:9000 {
		try_files {path} /index.php?{query}
		split .php .phtml
		env APP_ENV production
	}
	reverse_proxy /fcgi/* 127.0.0.1:9002 {
		transport fastcgi {
			split .php
		}
	}
}
`,
    `:8080 {
	reverse_proxy /fcgi/* 127.0.0.1:9002 {
		transport fastcgi {
			split .php
		}
	}
	php_fastcgi 127.0.0.1:9000 {
		split .php .phtml
		env APP_ENV production
		try_files {path} /index.php?{query}
	}
}
`,
  );
});

test("php_fastcgi with index off is the proxy route alone", async () => {
  const text = `:8080 {
	php_fastcgi 127.0.0.1:9000 {
		index off
	}
}
`;
  await writesBack(text, text);
});

test("routes that differ from a php_fastcgi expansion are not taken for one", async () => {
  const json = await adapt!(":8080 {\n\tphp_fastcgi 127.0.0.1:9000\n}\n") as {
    apps: { http: { servers: { srv0: { routes: { match: { path?: string[] }[] }[] } } } };
  };
  // the proxy route now matches other paths than the PHP extensions: three plain routes
  json.apps.http.servers.srv0.routes[2].match[0].path = ["/app/*.php"];
  const r = reverseConfig(json);
  assert.doesNotMatch(r.text, /php_fastcgi/);
  assert.match(r.text, /reverse_proxy \/app\/\*\.php 127\.0\.0\.1:9000 \{/);
  // the try_files rewrite with split_path has no form outside php_fastcgi, and says so
  assert.deepEqual(r.problems.map((p) => p.path), [
    "/apps/http/servers/srv0/routes/1/handle/0/uri",
  ]);
  assert.match(r.problems[0].message, /a whole-URI rewrite outside a route group/);
});

test("forward_auth is written back from its reverse_proxy, with copied and renamed headers", async () => {
  await writesBack(
    `app.example.com {
	@api path /api/*
	forward_auth @api auth.internal:9091 {
		uri /verify?app=1
		copy_headers Remote-User Remote-Email>X-Email
		header_up Host {upstream_hostport}
	}
	reverse_proxy backend:8080
}
`,
    `app.example.com {
	forward_auth /api/* auth.internal:9091 {
		uri /verify?app=1
		copy_headers Remote-Email>X-Email Remote-User
		header_up Host {upstream_hostport}
	}
	reverse_proxy backend:8080
}
`,
  );
});

test("a reverse_proxy that only looks like forward_auth stays reverse_proxy", async () => {
  const json = await adapt!(
    ":8080 {\n\tforward_auth auth:9091 {\n\t\turi /check\n\t\tcopy_headers X-User\n\t}\n}\n",
  ) as {
    apps: { http: { servers: { srv0: { routes: { handle: Record<string, unknown>[] }[] } } } };
  };
  const proxy = json.apps.http.servers.srv0.routes[0].handle[0];
  // the copy routes lose their delete step: not what forward_auth writes
  const hr = proxy.handle_response as { routes: unknown[] }[];
  hr[0].routes.splice(1, 1);
  const r = reverseConfig(json);
  assert.doesNotMatch(r.text, /forward_auth/);
  assert.match(r.text, /reverse_proxy auth:9091 \{/);
  assert.match(r.text, /rewrite \/check/);
  assert.deepEqual(await adapt!(r.text), json);
});

test("site logs with hostnames, several named logs, encoders, rolling and the net writer", async () => {
  await writesBack(
    `{
	log {
		format append {
			wrap json {
				time_format iso8601
				message_key msg
			}
			fields {
				instance 42
				label "42"
				debug false
				region eu-west
			}
		}
	}
	log audit {
		output net 10.0.0.5:5140 {
			dial_timeout 3s
			soft_start
		}
		format journald {
			wrap console
		}
		include admin.api
	}
}

*.example.com, example.com {
	log {
		hostnames a.example.com b.example.com
		output file /var/log/ab.log {
			roll_interval 24h
			roll_at 03:00
			roll_minutes 0 30
		}
	}
	log main {
		output file /var/log/main.log
	}
	respond hi
}

other.example.com {
	respond other
}
`,
    `{
	log {
		format append {
			wrap json {
				message_key msg
				time_format iso8601
			}
			fields {
				instance 42
				label "42"
				debug false
				region eu-west
			}
		}
		exclude admin.api
	}
	log audit {
		output net 10.0.0.5:5140 {
			dial_timeout 3s
			soft_start
		}
		format journald {
			wrap console
		}
		include admin.api
	}
}

other.example.com {
	respond other
}

*.example.com, example.com {
	respond hi
	log {
		hostnames a.example.com b.example.com
		output file /var/log/ab.log {
			roll_interval 24h
			roll_at 03:00
			roll_minutes 0 30
		}
	}
	log main {
		output file /var/log/main.log
	}
}
`,
  );
});

test("one block on two servers stays two blocks when they log differently", async () => {
  const text = `example.com {
	respond same
	log {
		hostnames www.example.com
		output file /var/log/www.log
	}
}

example.com:8443 {
	respond same
	log {
		output file /var/log/port.log
	}
}
`;
  await writesBack(text, text);
});

test("bind protocols, one bind per protocol list, and tls force_automate", async () => {
  await writesBack(
    `{
	auto_https disable_redirects
}

https://example.com {
	bind 127.0.0.1 ::1 {
		protocols h1 h2
	}
	bind udp/127.0.0.1 {
		protocols h3
	}
	tls force_automate
	respond secure
}
`,
    `{
	auto_https disable_redirects
}

example.com {
	bind 127.0.0.1 ::1 {
		protocols h1 h2
	}
	bind udp/127.0.0.1 {
		protocols h3
	}
	respond secure
	tls force_automate
}
`,
  );
});

test("file descriptor listeners with protocols, and the empty server they leave", async () => {
  const json = await writesBack(
    `https://localhost {
	bind fd/3 {
		protocols h1 h2
	}
	bind fdgram/4 {
		protocols h3
	}
	respond hi
}
`,
    `localhost {
	bind fd/3 {
		protocols h1 h2
	}
	bind fdgram/4 {
		protocols h3
	}
	respond hi
}
`,
  ) as { apps: { http: { servers: Record<string, Record<string, unknown>> } } };
  // the adapter leaves a server without listeners or routes behind (as Caddy does)
  assert.deepEqual(Object.keys(json.apps.http.servers).sort(), ["srv0", "srv1"]);
  assert.deepEqual(json.apps.http.servers.srv1, {});
  // an empty server with a field no other server has is reported, not dropped
  json.apps.http.servers.srv1.max_header_bytes = 1024;
  const r = reverseConfig(json);
  assert.deepEqual(r.problems.map((p) => p.path), [
    "/apps/http/servers/srv1/max_header_bytes",
  ]);
});

test("response matchers of encode and header are written as match blocks", async () => {
  const text = `:80 {
	header {
		match {
			status 404
		}
		X-Not-Found yes
	}
	encode gzip zstd {
		minimum_length 256
		match {
			status 2xx 4xx 500
			header Content-Type text/*
			header !X-No-Compress
		}
	}
}
`;
  await writesBack(text, text);
});

test("encoders with options are all written in the block, in preference order", async () => {
  const text = `:80 {
	encode {
		zstd better {
			disable_checksum
		}
		gzip 5
	}
	encode {
		gzip 5
		zstd
	}
}
`;
  await writesBack(text, text);
});

test("directives the sort reverses are written so that it puts them back; map outputs keep their types", async () => {
  // two vars without paths each sort before the other: the adapter's stable sort swaps them
  const text = `example.com {
	map {host} {a} {b} {
		example.com true 3
		foo.example.com "string value" -
		~.*\\.net$ - "7"
		default unknown false
	}
	vars foo bar
	vars {
		abc true
		def "1"
	}
}
`;
  const json = await writesBack(text, text) as {
    apps: { http: { servers: { srv0: { routes: { handle: { routes: unknown[] }[] }[] } } } };
  };
  const handlers = (json.apps.http.servers.srv0.routes[0].handle[0].routes[0] as {
    handle: Record<string, unknown>[];
  }).handle;
  assert.deepEqual(handlers.map((h) => Object.keys(h).filter((k) => k !== "handler")), [
    ["source", "destinations", "mappings", "defaults"],
    ["abc", "def"],
    ["foo"],
  ]);
});

test("pki CAs with their lifetimes, maintenance and renewal options", async () => {
  const text = `{
	skip_install_trust
	pki {
		ca {
			name "Test CA"
			intermediate_lifetime 48h
			maintenance_interval 10m
			renewal_window_ratio 0.3
		}
		ca other {
			name Other
		}
	}
}

localhost:8443 {
	respond hi
}
`;
  await writesBack(text, text);
});
