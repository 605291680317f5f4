/**
 * Every adapter error names the file and line of the token that caused it — the site key,
 * the global option or the directive — with Caddy's own message text after the location (so
 * Caddy's tests, which look for that text, still find it); and every table of sub-keywords
 * answers a near miss with "did you mean".
 */
import assert from "node:assert/strict";
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { GatehousefileError } from "../../../lib/server/caddyfile/dispenser.ts";
import { noFiles } from "../../../lib/server/caddyfile/files.ts";

function failure(src: string): GatehousefileError {
  try {
    adaptGatehousefile(src, { filename: "Gatehousefile", files: noFiles, env: () => undefined });
  } catch (e) {
    assert.ok(e instanceof GatehousefileError, `${src}\n${(e as Error)?.stack}`);
    return e;
  }
  assert.fail(`no error for:\n${src}`);
}

/** [config lines, line of the culprit, Caddy's message (exact, after the location)] */
const SETUP_ERRORS: [string[], number, string][] = [
  [
    ["a.test {", "\t@m foo /x", "\trespond @m hi", "}"],
    2,
    "getting matcher module 'foo': module not registered: http.matchers.foo",
  ],
  [
    ["a.test {", "\t@m path /x", "\t@m path /y", "}"],
    3,
    "matcher is defined more than once: @m",
  ],
  [
    ["a.test {", "\thandle {", "\t\t@m path /x", "\t\t@m path /y", "\t}", "}"],
    4,
    "matcher is defined more than once: @m",
  ],
  [
    ["a.test {", "\trespond @nope hi", "}"],
    2,
    "unrecognized matcher name: @nope",
  ],
  [
    ["a.test {", "\trespond hi", "\tinvoke nothere", "}"],
    3,
    "cannot invoke named route 'nothere', which was not defined",
  ],
  [
    ["&(outer) {", "\tinvoke inner", "}", "a.test {", "\tinvoke outer", "}"],
    2,
    "cannot invoke named route 'inner', which was not defined",
  ],
  [
    [
      "{",
      "\tservers :443 {",
      "\t\tname shared",
      "\t}",
      "\tservers :8443 {",
      "\t\tname shared",
      "\t}",
      "}",
      "a.test {",
      "}",
    ],
    6,
    "applying global server options: cannot use duplicate server name 'shared'",
  ],
  [
    ["{", "\tservers :443 {", "\t}", "\tservers :443 {", "\t}", "}"],
    4,
    "cannot have 'servers' global options with duplicate listener addresses: :443",
  ],
  [
    ["a.test {", "\ttls internal", "}", "a.test:8443 {", "\ttls ops@a.test", "}"],
    4,
    "hostname appears in more than one automation policy, making certificate management ambiguous: a.test",
  ],
  [
    ["a.test {", "}", "", "a.test {", "}"],
    4,
    "ambiguous site definition: a.test",
  ],
  [
    [
      "a.test/x {",
      "\ttls {",
      "\t\talpn h2",
      "\t}",
      "}",
      "a.test/y {",
      "\ttls {",
      "\t\talpn http/1.1",
      "\t}",
      "}",
    ],
    7,
    "two policies with same match criteria have conflicting ALPN: [h2] vs. [http/1.1]",
  ],
  [
    ["{", "\tlocal_certs", "\tcert_issuer acme", "}", "a.test {", "}"],
    2,
    "global options are ambiguous: local_certs is confusing when combined with cert_issuer, because local_certs is also a specific kind of issuer",
  ],
  [
    ["{", "\temail ops@a.test", "\tacme_dns", "}", "a.test {", "}"],
    3,
    "acme_dns specified without DNS provider config, but no provider specified with 'dns' global option",
  ],
  [
    ["http://a.test:8080 {", "}", "https://b.test:8080 {", "}"],
    3,
    "server listening on [:8080] is configured for HTTP and cannot natively multiplex HTTP and HTTPS: https://b.test:8080",
  ],
  [
    ["https://a.test:8080 {", "}", "http://b.test:8080 {", "}"],
    3,
    "server listening on [:8080] is configured for HTTPS and cannot natively multiplex HTTP and HTTPS: http://b.test:8080",
  ],
  [
    ["a.test {", "}", "{", "\tdebug", "}"],
    4,
    "server block without any key is global configuration, and if used, it must be first",
  ],
  [
    ["a.test {", "\troute {", "\t\tbind 127.0.0.1", "\t}", "}"],
    3,
    "bind directive returned something other than an HTTP route or subroute",
  ],
  [
    ["{", "\tlocal_certs", "}", ":443 {", "\ttls {", "\t\tissuer acme", "\t}", "}"],
    5,
    "automation policy from site block is also default/catch-all policy because of key without hostname, and the two are in conflict",
  ],
  [
    ["ok.test,", "a*b.test {", "}"],
    2,
    "subject does not qualify for certificate: 'a*b.test'",
  ],
  [
    // (an error raised after a directive's tokens are all read still names its line)
    [":8080 {", "\tforward_auth 127.0.0.1:9", "}"],
    2,
    "parsing caddyfile tokens for 'forward_auth': the 'uri' subdirective is required",
  ],
  [
    ["&(r) {", "\tlog", "}", "a.test {", "\tinvoke r", "}"],
    2,
    "directive 'log' is not an ordered HTTP handler, so it cannot be used here",
  ],
];

Deno.test("errors: every setup error names the file and line of its culprit, then Caddy's text", () => {
  for (const [lines, line, message] of SETUP_ERRORS) {
    const src = lines.join("\n") + "\n";
    const e = failure(src);
    assert.equal(e.file, "Gatehousefile", e.message);
    assert.equal(e.line, line, `${message}\n${e.message}`);
    assert.ok(e.message.includes(message), `${e.message}\n  should include\n${message}`);
    assert.ok(
      e.message.startsWith(`Gatehousefile:${line}: `) ||
        e.message.includes(`, at Gatehousefile:${line}`),
      e.message,
    );
  }
});

/** [config, the misspelt word, the suggestion] */
const NEAR_MISSES: [string, string, string][] = [
  ["a.test {\n\tencode gzp\n}", "gzp", "gzip"],
  ["a.test {\n\tencode {\n\t\tzstd {\n\t\t\tlevl 3\n\t\t}\n\t}\n}", "levl", "level"],
  ["a.test {\n\turi strip_prefx /a\n}", "strip_prefx", "strip_prefix"],
  ["a.test {\n\tfile_server {\n\t\tprecompressed gzp\n\t}\n}", "gzp", "gzip"],
  ["a.test {\n\tfile_server {\n\t\tbrowse {\n\t\t\tsort nme\n\t\t}\n\t}\n}", "nme", "name"],
  ["a.test {\n\ttry_files a {\n\t\tpolcy first_exist\n\t}\n}", "polcy", "policy"],
  ["a.test {\n\ttry_files a {\n\t\tpolicy first_exists\n\t}\n}", "first_exists", "first_exist"],
  ["a.test {\n\t@f file {\n\t\ttry_polcy x\n\t}\n}", "try_polcy", "try_policy"],
  [
    "a.test {\n\treverse_proxy x {\n\t\ttransport http {\n\t\t\tkeepalve 3s\n\t\t}\n\t}\n}",
    "keepalve",
    "keepalive",
  ],
  [
    "a.test {\n\treverse_proxy x {\n\t\ttransport fastcgi {\n\t\t\tsplt .php\n\t\t}\n\t}\n}",
    "splt",
    "split",
  ],
  [
    "a.test {\n\treverse_proxy x {\n\t\tlb_policy cookie {\n\t\t\tmax_ag 3s\n\t\t}\n\t}\n}",
    "max_ag",
    "max_age",
  ],
  [
    "a.test {\n\treverse_proxy x {\n\t\tlb_policy header X {\n\t\t\tfallbak first\n\t\t}\n\t}\n}",
    "fallbak",
    "fallback",
  ],
  [
    "a.test {\n\treverse_proxy {\n\t\tdynamic srv {\n\t\t\tservce x\n\t\t}\n\t}\n}",
    "servce",
    "service",
  ],
  [
    "a.test {\n\treverse_proxy {\n\t\tdynamic a {\n\t\t\tvrsions ipv4\n\t\t}\n\t}\n}",
    "vrsions",
    "versions",
  ],
  [
    "a.test {\n\treverse_proxy {\n\t\tdynamic a {\n\t\t\tversions ipv5\n\t\t}\n\t}\n}",
    "ipv5",
    "ipv4",
  ],
  ["a.test {\n\tcopy_response {\n\t\tstatsu 200\n\t}\n}", "statsu", "status"],
  ["a.test {\n\tcopy_response_headers {\n\t\tinclud X\n\t}\n}", "includ", "include"],
  ["a.test {\n\tbasic_auth bcrpt {\n\t\ta b\n\t}\n}", "bcrpt", "bcrypt"],
  [
    "a.test {\n\tmetrics {\n\t\tdisable_openmetric\n\t}\n}",
    "disable_openmetric",
    "disable_openmetrics",
  ],
  ["a.test {\n\tacme_server {\n\t\tlifetme 3h\n\t}\n}", "lifetme", "lifetime"],
  [
    "a.test {\n\tacme_server {\n\t\tallow {\n\t\t\tdomain a.com\n\t\t}\n\t}\n}",
    "domain",
    "domains",
  ],
  ["a.test {\n\t@t tls eearly_data\n}", "eearly_data", "early_data"],
  ["a.test {\n\t@u url_pattern /x {\n\t\tignore_cas\n\t}\n}", "ignore_cas", "ignore_case"],
  [
    "a.test {\n\treverse_proxy x {\n\t\t@r {\n\t\t\tstatis 500\n\t\t}\n\t}\n}",
    "statis",
    "status",
  ],
  ["a.test {\n\tlog {\n\t\tformat journald {\n\t\t\twrp json\n\t\t}\n\t}\n}", "wrp", "wrap"],
  [
    "a.test {\n\tlog {\n\t\tformat filter {\n\t\t\trequest>uri query {\n\t\t\t\trepalce a b\n\t\t\t}\n\t\t}\n\t}\n}",
    "repalce",
    "replace",
  ],
  [
    "a.test {\n\tlog {\n\t\tformat filter {\n\t\t\trequest>remote_ip ip_mask {\n\t\t\t\tipv44 16\n\t\t\t}\n\t\t}\n\t}\n}",
    "ipv44",
    "ipv4",
  ],
  [
    "a.test {\n\tlog {\n\t\tformat filter {\n\t\t\trequest>x multi_regexp {\n\t\t\t\tregex a b\n\t\t\t}\n\t\t}\n\t}\n}",
    "regex",
    "regexp",
  ],
  [
    "a.test {\n\tlog {\n\t\toutput file /x {\n\t\t\troll_sze 1MiB\n\t\t}\n\t}\n}",
    "roll_sze",
    "roll_size",
  ],
  [
    "a.test {\n\tlog {\n\t\toutput net x:1 {\n\t\t\tsoft_strat\n\t\t}\n\t}\n}",
    "soft_strat",
    "soft_start",
  ],
  [
    "a.test {\n\tlog {\n\t\tformat json {\n\t\t\tmessage_ky m\n\t\t}\n\t}\n}",
    "message_ky",
    "message_key",
  ],
  [
    "a.test {\n\ttls {\n\t\tclient_auth {\n\t\t\ttrust_pool inline {\n\t\t\t\ttrust_dr x\n\t\t\t}\n\t\t}\n\t}\n}",
    "trust_dr",
    "trust_der",
  ],
  [
    "a.test {\n\ttls {\n\t\tclient_auth {\n\t\t\ttrust_pool file {\n\t\t\t\tpem_fil x\n\t\t\t}\n\t\t}\n\t}\n}",
    "pem_fil",
    "pem_file",
  ],
  [
    "a.test {\n\ttls {\n\t\tclient_auth {\n\t\t\ttrust_pool http {\n\t\t\t\tendpoint x\n\t\t\t}\n\t\t}\n\t}\n}",
    "endpoint",
    "endpoints",
  ],
  [
    "a.test {\n\ttls {\n\t\tclient_auth {\n\t\t\ttrust_pool http {\n\t\t\t\ttls {\n\t\t\t\t\tserver_nam x\n\t\t\t\t}\n\t\t\t}\n\t\t}\n\t}\n}",
    "server_nam",
    "server_name",
  ],
  [
    "a.test {\n\ttls {\n\t\tclient_auth {\n\t\t\ttrust_pool http {\n\t\t\t\ttls {\n\t\t\t\t\trenegotiation onse\n\t\t\t\t}\n\t\t\t}\n\t\t}\n\t}\n}",
    "onse",
    "once",
  ],
  [
    "a.test {\n\ttls {\n\t\tclient_auth {\n\t\t\ttrust_pool storage {\n\t\t\t\tkey x\n\t\t\t}\n\t\t}\n\t}\n}",
    "key",
    "keys",
  ],
  [
    "a.test {\n\ttls {\n\t\tclient_auth {\n\t\t\ttrust_pool combined {\n\t\t\t\tsourc x\n\t\t\t}\n\t\t}\n\t}\n}",
    "sourc",
    "source",
  ],
  [
    "a.test {\n\ttls {\n\t\tclient_auth {\n\t\t\ttrust_pool pki_root {\n\t\t\t\tauthorty x\n\t\t\t}\n\t\t}\n\t}\n}",
    "authorty",
    "authority",
  ],
  ["a.test {\n\ttls {\n\t\tissuer acme {\n\t\t\temal a@b.c\n\t\t}\n\t}\n}", "emal", "email"],
  [
    "a.test {\n\ttls {\n\t\tissuer internal {\n\t\t\tlifetim 1h\n\t\t}\n\t}\n}",
    "lifetim",
    "lifetime",
  ],
  [
    "a.test {\n\ttls {\n\t\tissuer zerossl KEY {\n\t\t\tvalidity_day 3\n\t\t}\n\t}\n}",
    "validity_day",
    "validity_days",
  ],
  ["a.test {\n\ttls {\n\t\tprotocols tls1.4\n\t}\n}", "tls1.4", "tls1.2"],
  ["a.test {\n\ttls {\n\t\tcurves x2551\n\t}\n}", "x2551", "x25519"],
  ["a.test {\n\ttls {\n\t\tdns challtestsrv {\n\t\t\turll x\n\t\t}\n\t}\n}", "urll", "url"],
  ["{\n\torder respond frist\n}", "frist", "first"],
  ["{\n\tmetrics {\n\t\tper_hst\n\t}\n}", "per_hst", "per_host"],
  ["{\n\tpki {\n\t\tca {\n\t\t\troot {\n\t\t\t\tcrt x\n\t\t\t}\n\t\t}\n\t}\n}", "crt", "cert"],
  ["{\n\tpki {\n\t\tcaa\n\t}\n}", "caa", "ca"],
  ["{\n\tpki {\n\t\tca {\n\t\t\troot_c x\n\t\t}\n\t}\n}", "root_c", "root_cn"],
  ["{\n\tservers {\n\t\tprotocols h3x\n\t}\n}", "h3x", "h3"],
  ["{\n\tservers {\n\t\tmetrics {\n\t\t\tper_hos\n\t\t}\n\t}\n}", "per_hos", "per_host"],
  ["{\n\tstorage file_system {\n\t\troo /x\n\t}\n}", "roo", "root"],
];

Deno.test("errors: a near miss in any sub-keyword table gets 'did you mean', at its line", () => {
  for (const [src, wrong, right] of NEAR_MISSES) {
    const e = failure(src + "\n");
    const line = src.split("\n").findIndex((l) => l.trim().split(/\s+/).includes(wrong)) + 1;
    assert.ok(e.message.includes(wrong), e.message);
    assert.ok(e.message.includes(`(did you mean '${right}'?)`), `${src}\n=> ${e.message}`);
    assert.equal(e.line, line, e.message);
  }
});

Deno.test("errors: a word far from every known one gets no suggestion", () => {
  const e = failure("a.test {\n\tencode brotli-ultra\n}\n");
  assert.match(
    e.message,
    /module not registered: http\.encoders\.brotli-ultra, at Gatehousefile:2$/,
  );
});

Deno.test("errors: subdirectives Caddy skips silently are refused here", () => {
  // try_files: only `policy` in its block
  const t = failure("a.test {\n\ttry_files {path} /index.html {\n\t\tpolcy first_exist\n\t}\n}\n");
  assert.match(t.message, /unrecognized subdirective polcy \(did you mean 'policy'\?\)/);
  // client_auth takes no arguments on its own line
  const c = failure("a.test {\n\ttls {\n\t\tclient_auth require {\n\t\t}\n\t}\n}\n");
  assert.match(
    c.message,
    /wrong argument count or unexpected line ending after 'require', at Gatehousefile:3$/,
  );
});

Deno.test("errors: warnings name their line too", () => {
  const { warnings } = adaptGatehousefile(
    ["a.test {", "}", "", "b.test/x,", "0.0.0.0:8080 {", "\tbasicauth {", "\t\tu p", "\t}", "}", ""]
      .join("\n"),
    { filename: "Gatehousefile", files: noFiles, env: () => undefined },
  );
  assert.deepEqual(
    warnings.map((w) => [w.file, w.line, w.message.replace(/[;(].*/, "")]),
    [
      [
        "Gatehousefile",
        6,
        "the 'basicauth' directive is deprecated, please use 'basic_auth' instead!",
      ],
      ["Gatehousefile", 4, "Using a path in a site address is deprecated"],
      [
        "Gatehousefile",
        5,
        "Site block has an unspecified IP address which only matches requests having that Host header",
      ],
    ],
  );
});
