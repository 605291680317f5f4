/**
 * `bind` and `default_bind` as current Caddy reads them (2.6.2 differed): `default_bind` with
 * no address binds every interface, and a port in a bind address is not used — the listener's
 * port is the site's — which the adapter says in a warning at the address's line.
 */
import assert from "node:assert/strict";
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { noFiles } from "../../../lib/server/caddyfile/files.ts";

// deno-lint-ignore no-explicit-any
type J = Record<string, any>;

function adapt(lines: string[]) {
  const r = adaptGatehousefile(lines.join("\n") + "\n", {
    filename: "Gatehousefile",
    files: noFiles,
    env: () => undefined,
  });
  return { config: r.result as J, warnings: r.warnings };
}

Deno.test("bind: default_bind without addresses binds every interface, like no default_bind", () => {
  const site = [":8080 {", "\trespond hi", "}"];
  const plain = adapt(site);
  const bare = adapt(["{", "\tdefault_bind", "}", ...site]);
  assert.deepEqual(bare.config.apps.http.servers.srv0.listen, [":8080"]);
  assert.deepEqual(bare.config, plain.config);
  assert.deepEqual(bare.warnings, []);
  // protocols alone apply to every interface
  const h1 = adapt(["{", "\tdefault_bind {", "\t\tprotocols h1", "\t}", "}", ...site]);
  assert.deepEqual(h1.config.apps.http.servers.srv0.listen, [":8080"]);
  assert.deepEqual(h1.config.apps.http.servers.srv0.listen_protocols, [["h1"]]);
});

Deno.test("bind: a port in a bind address is not used, and a warning says so at its line", () => {
  const { config, warnings } = adapt([
    ":80 {",
    "\tbind 1.2.3.4:5 [::1]:6 127.0.0.1",
    "\trespond hi",
    "}",
  ]);
  // (listeners sorted, as Caddy sorts them)
  assert.deepEqual(config.apps.http.servers.srv0.listen, [
    "1.2.3.4:80",
    "127.0.0.1:80",
    "[::1]:80",
  ]);
  assert.deepEqual(
    warnings.map((w) => [w.file, w.line, w.message]),
    [
      [
        "Gatehousefile",
        2,
        "bind address 1.2.3.4:5: the port 5 is not used; a listener's port comes from the site address (put :5 there)",
      ],
      [
        "Gatehousefile",
        2,
        "bind address [::1]:6: the port 6 is not used; a listener's port comes from the site address (put :6 there)",
      ],
    ],
  );
});

Deno.test("bind: default_bind with a port: the same warning, the site's port", () => {
  const { config, warnings } = adapt([
    "{",
    "\tdefault_bind tcp4/127.0.0.1:9",
    "}",
    "a.test:8443 {",
    "}",
  ]);
  assert.deepEqual(config.apps.http.servers.srv0.listen, ["tcp4/127.0.0.1:8443"]);
  assert.deepEqual(warnings.map((w) => [w.line, w.message]), [[
    2,
    "default_bind address tcp4/127.0.0.1:9: the port 9 is not used; a listener's port comes from the site address (put :9 there)",
  ]]);
});

Deno.test("bind: addresses without a port, unix sockets and fd listeners give no warning", () => {
  const { config, warnings } = adapt([
    ":80 {",
    "\tbind 127.0.0.1 tcp6/[::1] unix//run/g.sock fd/3",
    "}",
  ]);
  assert.deepEqual(config.apps.http.servers.srv0.listen, [
    "127.0.0.1:80",
    "fd/3",
    "tcp6/[::1]:80",
    "unix//run/g.sock",
  ]);
  assert.deepEqual(warnings, []);
});
