/**
 * The adapter's own cases: how directives are ordered and grouped, how sites become servers,
 * and every adapter-level error (with its file:line and "did you mean").
 */
import assert from "node:assert/strict";
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { noFiles } from "../../../lib/server/caddyfile/files.ts";
import { getAdapter } from "../../../lib/server/adapter.ts";

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
const srv0 = (c: J) => c.apps.http.servers.srv0;
const siteRoutes = (c: J) => srv0(c).routes[0].handle[0].routes;

Deno.test("adapter: registered as gatehousefile and caddyfile", () => {
  assert.equal(getAdapter("gatehousefile"), getAdapter("caddyfile"));
  assert.ok(getAdapter("gatehousefile"));
});

Deno.test("adapter: directives run in Caddy's order whatever the order written; order changes it", () => {
  const c = adapt(
    "a.com {\n\trespond hi\n\theader X y\n\tredir /old /new\n\troot * /srv\n\tencode gzip\n}\n",
  );
  const handlers = siteRoutes(c).flatMap((r: J) => r.handle.map((h: J) => h.handler));
  assert.deepEqual(handlers, ["vars", "headers", "static_response", "encode", "static_response"]);
  const o = adapt(
    "{\n\torder respond first\n}\na.com {\n\theader X y\n\trespond hi\n}\n",
  );
  assert.deepEqual(siteRoutes(o)[0].handle.map((h: J) => h.handler), [
    "static_response",
    "headers",
  ]);
});

Deno.test("adapter: same directive sorted by path specificity; handle blocks grouped", () => {
  const c = adapt(
    ":80 {\n\trespond /a* a\n\trespond /abc/* abc\n\trespond * any\n\thandle /x {\n\t\trespond x\n\t}\n\thandle {\n\t\trespond y\n\t}\n}\n",
  );
  const routes = srv0(c).routes;
  // (group numbers as Caddy counts them: every block of directives reserves one for rewrites)
  assert.deepEqual(routes.slice(0, 2).map((r: J) => r.group), ["group2", "group2"]);
  assert.deepEqual(routes.slice(2).map((r: J) => r.match?.[0].path?.[0] ?? "*"), [
    "/abc/*",
    "/a*",
    "*",
  ]);
});

Deno.test("adapter: sites become servers by listener; most specific host first; http and https apart", () => {
  const c = adapt(
    "*.example.com {\n\trespond wild\n}\nwww.example.com {\n\trespond www\n}\nhttp://plain.test {\n\trespond plain\n}\n:8080 {\n\trespond any\n}\n",
  );
  const servers = c.apps.http.servers;
  assert.deepEqual(Object.keys(servers).sort(), ["srv0", "srv1", "srv2"]);
  assert.deepEqual(servers.srv0.listen, [":443"]);
  assert.deepEqual(servers.srv0.routes.map((r: J) => r.match[0].host[0]), [
    "www.example.com",
    "*.example.com",
  ]);
  assert.deepEqual(servers.srv1.listen, [":80"]);
  assert.deepEqual(servers.srv2.listen, [":8080"]);
  assert.equal(servers.srv2.routes[0].match, undefined);
});

Deno.test("adapter: tls internal gives an automation policy; files give a loader and a tagged policy", () => {
  const c = adapt(
    "a.test {\n\ttls internal\n\trespond a\n}\nb.test {\n\ttls b.crt b.key\n\trespond b\n}\n",
  );
  assert.deepEqual(c.apps.tls.automation.policies, [
    { subjects: ["a.test"], issuers: [{ module: "internal" }] },
  ]);
  assert.deepEqual(c.apps.tls.certificates.load_files, [
    { certificate: "b.crt", key: "b.key", tags: ["cert0"] },
  ]);
  assert.deepEqual(srv0(c).tls_connection_policies, [
    { match: { sni: ["b.test"] }, certificate_selection: { any_tag: ["cert0"] } },
    {},
  ]);
});

Deno.test("adapter: site logs, global log and debug", () => {
  const c = adapt(
    "{\n\tdebug\n\tlog access {\n\t\toutput stderr\n\t\tinclude http.log.access\n\t}\n}\na.com {\n\tlog {\n\t\toutput stdout\n\t}\n\trespond a\n}\nb.com {\n\tlog\n\trespond b\n}\n",
  );
  // an empty log block only turns access logging on, into the default log
  assert.deepEqual(srv0(c).logs, { logger_names: { "a.com": ["log0"], "b.com": [""] } });
  const logs = c.logging.logs;
  assert.equal(logs.default.level, "DEBUG");
  assert.deepEqual(logs.default.exclude, ["http.log.access", "http.log.access.log0"]);
  assert.equal(logs.access.level, "DEBUG");
  assert.deepEqual(logs.log0.include, ["http.log.access.log0"]);
});

Deno.test("adapter: unformatted input is a warning with its line", () => {
  const r = adaptGatehousefile(":80 {\nrespond hi\n}\n", { filename: "G", files: noFiles });
  assert.deepEqual(r.warnings.map((w) => [w.file, w.line]), [["G", 2]]);
  assert.match(r.warnings[0].message, /input is not formatted/);
});

Deno.test("adapter: every adapter-level error names where", () => {
  const cases: [string, RegExp][] = [
    [
      ":80 {\n\trever_proxy x\n}\n",
      /^Gatehousefile:2: unrecognized directive: rever_proxy \(did you mean 'reverse_proxy'\?\)$/,
    ],
    [
      ":80\nrespnd x\n",
      /^Gatehousefile:2: unrecognized directive: respnd \(did you mean 'respond'\?\)\nDid you mean to define a second site\?/,
    ],
    [
      "{\n\tdebugg\n}\n",
      /^Gatehousefile:2: unrecognized global option: debugg \(did you mean 'debug'\?\)$/,
    ],
    [
      "respond\n",
      /^Gatehousefile:1: parsed 'respond' as a site address, but it is a known directive/,
    ],
    [
      ":80 {\n\trespond @nope x\n}\n",
      /^parsing caddyfile tokens for 'respond': unrecognized matcher name: @nope, at Gatehousefile:2$/,
    ],
    [
      ":80 {\n\t@m pth /x\n\trespond @m x\n}\n",
      /^getting matcher module 'pth': module not registered: http\.matchers\.pth \(did you mean 'path'\?\), at Gatehousefile:2$/,
    ],
    [
      ":80 {\n\t@m path /x\n\t@m path /y\n}\n",
      /^matcher is defined more than once: @m, at Gatehousefile:3$/,
    ],
    ["a.com {\n}\na.com {\n}\n", /^Gatehousefile:3: ambiguous site definition: a\.com$/],
    ["a.com:99999 {\n}\n", /^Gatehousefile:1: parsing key: port 99999 is out of range$/],
    [
      "wss://a.com {\n}\n",
      /the scheme wss:\/\/ is only supported in browsers; use https:\/\/ instead/,
    ],
    ["ftp://a.com {\n}\n", /unsupported URL scheme ftp:\/\//],
    ["http://a.com:443 {\n}\n", /\[http:\/\/a\.com:443\] scheme and port violate convention/],
    [
      "{\n\torder nope first\n}\n",
      /^parsing caddyfile tokens for 'order': nope is not a registered directive, at Gatehousefile:2$/,
    ],
    ["{\n\torder respond sideways\n}\n", /unknown positional 'sideways'/],
    ["{\n\tservers :80 {\n\t}\n\tservers :80 {\n\t}\n}\n", /duplicate listener addresses: :80/],
    [
      "&(r) {\n\trespond a\n}\n&(r) {\n\trespond b\n}\n",
      /^Gatehousefile:4: cannot have duplicate named_routes: r$/,
    ],
    [
      ":80 {\n\tinvoke nope\n}\n",
      /^Gatehousefile:2: cannot invoke named route 'nope', which was not defined$/,
    ],
    [
      ":80 {\n\treverse_proxy x {\n\t\tlb_polcy first\n\t}\n}\n",
      /unrecognized subdirective lb_polcy \(did you mean 'lb_policy'\?\), at Gatehousefile:3$/,
    ],
    [
      ":80 {\n\ttls {\n\t\tprotocols tls1.0\n\t}\n}\n",
      /wrong protocol name or protocol not supported: 'tls1\.0'/,
    ],
    [
      ":80 {\n\tlog {\n\t\toutput nowhere\n\t}\n}\n",
      /module not registered: caddy\.logging\.writers\.nowhere/,
    ],
    [":80 {\n\tredir /a /b 500\n}\n", /Redir code not in the 3xx range or 401: '500'/],
    ["{\n\tpersist_config on\n}\n", /persist_config must be 'off'/],
  ];
  for (const [src, re] of cases) {
    assert.throws(() => adapt(src), (e: unknown) => {
      assert.match((e as Error).message, re, src);
      return true;
    });
  }
});

Deno.test("adapter: trusted_ca_cert_file and trusted_leaf_cert_file carry the file's certificates as base64 DER, refusing as Caddy does", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const one = "MIIBbTCCARKgAwIBAgITJPMiXcgxic6KNLCbOjXzEGv+zzAKBggqhkjOPQQDAjAM";
    const two = "AQID";
    const pem = (label: string, b64: string) =>
      `-----BEGIN ${label}-----\n${b64.slice(0, 32)}\n${b64.slice(32)}\n-----END ${label}-----\n`;
    const write = (name: string, text: string) => Deno.writeTextFile(`${dir}/${name}`, text);
    await write("two.pem", `a bundle\n${pem("CERTIFICATE", one)}\n${pem("CERTIFICATE", two)}`);
    await write("key.pem", pem("PRIVATE KEY", two) + pem("CERTIFICATE", one));
    await write("lower.pem", pem("certificate", two) + pem("CERTIFICATE", one));
    await write("empty.pem", "no blocks here\n");
    const site = (sub: string, file: string) =>
      `a.test {\n\ttls internal {\n\t\tclient_auth {\n\t\t\t${sub} ${dir}/${file}\n\t\t}\n\t}\n}\n`;
    const ca = (c: J) => srv0(c).tls_connection_policies[0].client_authentication;
    assert.deepEqual(ca(adapt(site("trusted_ca_cert_file", "two.pem"))).ca.trusted_ca_certs, [
      one,
      two,
    ]);
    assert.deepEqual(ca(adapt(site("trusted_leaf_cert_file", "two.pem"))).trusted_leaf_certs, [
      one,
      two,
    ]);
    for (const file of ["key.pem", "lower.pem", "empty.pem"]) {
      for (const sub of ["trusted_ca_cert_file", "trusted_leaf_cert_file"]) {
        assert.throws(() => adapt(site(sub, file)), (e: unknown) => {
          assert.equal(
            (e as Error).message,
            `parsing caddyfile tokens for 'tls': no CERTIFICATE pem block found in ${dir}/${file}, at Gatehousefile:4`,
          );
          return true;
        });
      }
    }
    assert.throws(() => adapt(site("trusted_ca_cert_file", "missing.pem")), (e: unknown) => {
      assert.match(
        (e as Error).message,
        new RegExp(
          `^parsing caddyfile tokens for 'tls': open ${dir}/missing\\.pem: .*, at Gatehousefile:4$`,
        ),
      );
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
