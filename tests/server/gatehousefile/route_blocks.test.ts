/**
 * Blocks whose subdirectives are directives (`route`, `handle`, `handle_path`,
 * `handle_errors`, named routes, `handle_response` of `reverse_proxy`, `php_fastcgi`,
 * `forward_auth` and `intercept`) take handler directives only: a directive that configures
 * the site (`tls`, `bind`, `log`, `handle_errors`) is refused where it is written, as Caddy
 * refuses it, and never written out as a route.
 */
import assert from "node:assert/strict";
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { GatehousefileError } from "../../../lib/server/caddyfile/dispenser.ts";
import { noFiles } from "../../../lib/server/caddyfile/files.ts";
import { DEFAULT_DIRECTIVE_ORDER, directiveNames } from "../../../lib/server/caddyfile/registry.ts";

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

function refusal(src: string): GatehousefileError {
  try {
    adapt(src);
  } catch (e) {
    assert.ok(e instanceof GatehousefileError, `${src}: ${(e as Error)?.stack}`);
    return e;
  }
  assert.fail(`no error for:\n${src}`);
}

/** One use of each directive that is not a handler (the test fails when one is missing). */
const SITE_DIRECTIVES: Record<string, string[]> = {
  bind: ["bind 127.0.0.1"],
  tls: ["tls internal"],
  log: ["log"],
  handle_errors: ["handle_errors {", "\trespond oops", "}"],
};

/**
 * Every block that takes directives: its lines around the body, the line of the body's
 * first line, and whether the block keeps the order written (`route`) or sorts.
 */
const BLOCKS: { name: string; wrap: (body: string[]) => string; line: number; sorts: boolean }[] = [
  { name: "route", wrap: (b) => site(["route {", ...ind(b), "}"]), line: 3, sorts: false },
  { name: "handle", wrap: (b) => site(["handle {", ...ind(b), "}"]), line: 3, sorts: true },
  {
    name: "handle_path",
    wrap: (b) => site(["handle_path /p/* {", ...ind(b), "}"]),
    line: 3,
    sorts: true,
  },
  {
    name: "handle_errors",
    wrap: (b) => site(["handle_errors 5xx {", ...ind(b), "}"]),
    line: 3,
    sorts: true,
  },
  {
    name: "named route",
    wrap: (b) => ["&(named) {", ...ind(b), "}", ...site(["invoke named"]).split("\n")].join("\n"),
    line: 2,
    sorts: true,
  },
  ...[
    "reverse_proxy 127.0.0.1:9",
    "php_fastcgi 127.0.0.1:9",
    "forward_auth 127.0.0.1:9",
    "intercept",
  ]
    .map((d) => ({
      name: `${d.split(" ")[0]} handle_response`,
      wrap: (b: string[]) =>
        site([
          `${d} {`,
          ...(d.startsWith("forward_auth") ? ["\turi /auth"] : []),
          "\t@err status 500",
          "\thandle_response @err {",
          ...ind(ind(b)),
          "\t}",
          "}",
        ]),
      line: d.startsWith("forward_auth") ? 6 : 5,
      sorts: true,
    })),
];

function ind(lines: string[]): string[] {
  return lines.map((l) => `\t${l}`);
}
function site(body: string[]): string {
  return ["a.test {", ...ind(body), "}", ""].join("\n");
}

Deno.test("route blocks: the list of site directives is every directive Caddy does not order", () => {
  const unordered = directiveNames().filter((d) => !DEFAULT_DIRECTIVE_ORDER.includes(d)).sort();
  assert.deepEqual(unordered, Object.keys(SITE_DIRECTIVES).sort());
});

Deno.test("route blocks: every block takes handler directives (the control)", () => {
  for (const b of BLOCKS) {
    const out = JSON.stringify(adapt(b.wrap(["respond inner 201"])));
    assert.ok(out.includes('"body":"inner"') && out.includes('"status_code":201'), b.name);
  }
});

Deno.test("route blocks: a site directive in any block is refused at its line, never written out", () => {
  for (const b of BLOCKS) {
    for (const [dir, lines] of Object.entries(SITE_DIRECTIVES)) {
      const src = b.wrap(lines);
      const e = refusal(src);
      const what = `${dir} in ${b.name}`;
      assert.equal(e.file, "Gatehousefile", what);
      assert.equal(e.line, b.line, `${what}: ${e.message}`);
      assert.ok(e.message.includes(`at Gatehousefile:${b.line}`), `${what}: ${e.message}`);
      if (b.sorts) {
        assert.ok(
          e.message.includes(
            `directive '${dir}' is not an ordered HTTP handler, so it cannot be used here`,
          ),
          `${what}: ${e.message}`,
        );
      } else {
        assert.ok(
          e.message.includes(
            `${dir} directive returned something other than an HTTP route or subroute (only handler directives can be used in routes)`,
          ),
          `${what}: ${e.message}`,
        );
      }
    }
  }
});

Deno.test("route blocks: nested route blocks and the order option do not let a site directive through", () => {
  const nested = refusal(
    site(["route {", "\thandle {", "\t\troute {", "\t\t\ttls internal", "\t\t}", "\t}", "}"]),
  );
  assert.equal(nested.line, 5);
  assert.match(nested.message, /tls directive returned something other than an HTTP route/);
  // `order` may name any directive; a site directive so ordered still is not a route
  for (const block of ["route", "handle"]) {
    const e = refusal(
      ["{", "\torder bind first", "}", site([`${block} {`, "\tbind 127.0.0.1", "}"])].join("\n"),
    );
    assert.equal(e.line, 6, e.message);
    assert.match(e.message, /bind directive returned something other than an HTTP route/);
  }
  // (at the top of a site, the same order changes nothing: bind still binds)
  const c = adapt(
    ["{", "\torder bind first", "}", "a.test:8443 {", "\tbind 127.0.0.1", "}"].join("\n"),
  );
  assert.deepEqual(c.apps.http.servers.srv0.listen, ["127.0.0.1:8443"]);
});

Deno.test("route blocks: an acme_server's CA in a nested block or named route reaches the pki app", () => {
  const c = adapt(
    [
      "&(r) {",
      "\tacme_server {",
      "\t\tca named_ca",
      "\t}",
      "}",
      site(["handle /acme/* {", "\tacme_server {", "\t\tca nested_ca", "\t}", "}", "invoke r"]),
    ].join("\n"),
  );
  assert.deepEqual(Object.keys(c.apps.pki.certificate_authorities).sort(), [
    "named_ca",
    "nested_ca",
  ]);
  const handlers = JSON.stringify(c.apps.http.servers.srv0);
  assert.ok(handlers.includes('"ca":"nested_ca"'));
  assert.ok(!handlers.includes('"id":"nested_ca"'), "the CA is not written as a route");
});
