/**
 * The adapter against Caddy 2.6.2's `caddy adapt` (the oracle installed here), on
 * Gatehousefiles that 2.6.2 supports: the JSON must be equal (object key order ignored).
 * Two places where newer Caddy (the target) changed its output are avoided: `handle_errors`
 * now wraps its routes in one more subroute, and `route` now merges adjacent routes.
 */
import assert from "node:assert/strict";
import "../../../lib/server/standard.ts";
import { adaptGatehousefile } from "../../../lib/server/adapters/gatehousefile/mod.ts";
import { stableJSON } from "../../../lib/server/caddyfile/types.ts";

const CASES: Record<string, string> = {
  file_server: "example.com {\n\troot * /srv\n\tfile_server browse\n}\n",
  respond: ':8080 {\n\trespond /health 200\n\trespond "not found" 404 {\n\t\tclose\n\t}\n}\n',
  reverse_proxy: [
    "localhost {",
    "\treverse_proxy /api/* 127.0.0.1:9000 127.0.0.1:9001 {",
    "\t\tlb_policy round_robin",
    "\t\tlb_try_duration 5s",
    "\t\thealth_uri /healthz",
    "\t\thealth_interval 10s",
    "\t\theader_up X-Real-IP {remote_host}",
    "\t\theader_down -Server",
    "\t}",
    "\tfile_server",
    "}",
  ].join("\n"),
  headers_and_rewrites: [
    "example.com, www.example.com {",
    "\tencode zstd gzip",
    "\theader {",
    "\t\tStrict-Transport-Security max-age=31536000",
    "\t\t-Server",
    "\t\t+X-Extra one",
    "\t}",
    "\tredir /old /new permanent",
    "\trewrite /a /b",
    "\turi strip_prefix /prefix",
    "}",
  ].join("\n"),
  named_matchers_and_handle: [
    ":80 {",
    "\t@api {",
    "\t\tpath /api/*",
    "\t\tmethod GET POST",
    "\t}",
    "\thandle @api {",
    '\t\trespond "api"',
    "\t}",
    "\thandle {",
    '\t\trespond "other"',
    "\t}",
    "}",
  ].join("\n"),
  global_options: [
    "{",
    "\thttp_port 8080",
    "\thttps_port 8443",
    "\tadmin localhost:2020",
    "\tgrace_period 10s",
    "\torder respond before header",
    "}",
    "a.example.com {",
    '\trespond "a"',
    "}",
  ].join("\n"),
  handle_path_and_log: [
    ":9000 {",
    "\thandle_path /static/* {",
    "\t\troot * /var/www",
    "\t\tfile_server",
    "\t}",
    "\tlog {",
    "\t\toutput file /var/log/site.log",
    "\t\tformat json",
    "\t}",
    "}",
  ].join("\n"),
  tls_internal_route: 'example.com {\n\ttls internal\n\troute {\n\t\trespond "routed"\n\t}\n}\n',
  tls_files_basicauth_try_files: [
    "example.com {",
    "\ttls cert.pem key.pem",
    "\tbasicauth /secret/* {",
    "\t\tbob $2a$14$Zkx19XLiW6VYouLHR5NmfOFU0z2GTNmpkT/5qqR7hx4IjWJPDhjvG",
    "\t}",
    "\ttry_files {path} /index.html",
    "}",
  ].join("\n"),
  not_abort_vars_map: [
    ":8080 {",
    "\t@notget not method GET",
    "\tabort @notget",
    "\tvars foo bar",
    "\tmap {host} {my_placeholder} {",
    "\t\texample.com  yes",
    "\t\tdefault      no",
    "\t}",
    "\trespond {my_placeholder}",
    "}",
  ].join("\n"),
  request_body_templates_push: [
    "http://example.com {",
    "\trequest_body {",
    "\t\tmax_size 1MB",
    "\t}",
    "\ttemplates",
    "\tpush /style.css",
    '\trespond "ok"',
    "}",
  ].join("\n"),
  tls_options: [
    "example.com:8443 {",
    "\ttls {",
    "\t\tprotocols tls1.2 tls1.3",
    "\t\tciphers TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    "\t\talpn h2",
    "\t}",
    '\trespond "x"',
    "}",
  ].join("\n"),
  local_certs_email:
    "{\n\tlocal_certs\n\temail admin@example.com\n}\nexample.com, localhost {\n\trespond hi\n}\n",
  bind: ":80, :8080 {\n\tbind 127.0.0.1\n\trespond hi\n}\n",
  snippet_query_error: [
    "(snip) {",
    "\theader X-Snippet {args.0}",
    "}",
    "example.com {",
    "\timport snip hello",
    "\t@q query a=1",
    '\trespond @q "query"',
    '\terror /forbidden "nope" 403',
    "}",
  ].join("\n"),
  auto_https_and_sites: [
    "{",
    "\tauto_https disable_redirects",
    "}",
    "a.com, *.b.com, http://c.com, :9000 {",
    "\trespond hi",
    "}",
    "d.com {",
    "\trespond d",
    "}",
  ].join("\n"),
};

const hasCaddy = (() => {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "adapt differential: same JSON as caddy adapt (2.6.2) for every case",
  ignore: !hasCaddy,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      for (const [name, src] of Object.entries(CASES)) {
        const file = `${dir}/Caddyfile`;
        await Deno.writeTextFile(file, src);
        const out = await new Deno.Command("caddy", {
          args: ["adapt", "--config", file, "--adapter", "caddyfile"],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.ok(
          out.success,
          `${name}: caddy adapt failed: ${new TextDecoder().decode(out.stderr)}`,
        );
        const theirs = JSON.parse(new TextDecoder().decode(out.stdout));
        const ours = adaptGatehousefile(src, { filename: file }).result;
        assert.equal(stableJSON(ours), stableJSON(theirs), name);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
