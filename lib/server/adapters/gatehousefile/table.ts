/**
 * Every directive, global option and module syntax the Gatehousefile knows: the syntax sets
 * the module tables name (loaded here, when the adapter loads), and one line each for the
 * syntax not yet named by a table and for the assembler's own (global options, site
 * directives). A module's syntax lives beside the module.
 *
 * @module
 */
import { registerClientAuthSyntaxes } from "../../tls/client_auth_caddyfile.ts";
import { registerIssuerSyntaxes } from "../../tls/issuers_caddyfile.ts";
import { parseTLS } from "../../tls/caddyfile.ts";
import { fileWriter, netWriter, plainEncoder } from "../../logging/caddyfile.ts";
import {
  expressionMatcher,
  fieldRegexpMatcher,
  headerMatcher,
  ipMatcher,
  listMatcher,
  notMatcher,
  pathRegexpMatcher,
  protocolMatcher,
  queryMatcher,
  tlsMatcher,
  urlPatternMatcher,
  varsMatcher,
} from "../../http/matchers/caddyfile.ts";
import { parseReverseProxy } from "../../http/handlers/reverse_proxy/caddyfile.ts";
import {
  parseCopyResponse,
  parseCopyResponseHeaders,
} from "../../http/handlers/reverse_proxy/caddyfile_response.ts";
import { registerProxySyntaxes } from "../../http/handlers/reverse_proxy/caddyfile_transport.ts";
import { registerListenerWrapperSyntaxes } from "../../http/listener_wrappers_caddyfile.ts";
import { registerEncoderSyntaxes } from "../../logging/caddyfile_encoders.ts";
import { staticIPSource } from "../../http/ip_source_static_caddyfile.ts";
import { parseForwardAuth } from "../../http/handlers/reverse_proxy/caddyfile_forward_auth.ts";
import {
  fastcgiTransport,
  parsePHPFastCGI,
} from "../../http/handlers/reverse_proxy/caddyfile_fastcgi.ts";
import { syntax as metricsSyntax } from "../../metrics/caddyfile.ts";
import { syntax as tracingSyntax } from "../../tracing/caddyfile.ts";
import { parseLog } from "./logs.ts";
import { registerGeneralOptions } from "./options.ts";
import { registerTLSOptions } from "./options_tls.ts";
import {
  registerDirective,
  registerHandlerDirective,
  registerSyntax,
  registerSyntaxSet,
  type SyntaxSet,
} from "../../caddyfile/registry.ts";
import { HANDLERS, SYNTAX_ONLY } from "../../http/handlers/mod.ts";
import { fileSystemStorage, mockDNSProvider, parseBind } from "./site_directives.ts";
import { challtestsrvSyntax } from "../../tls/dns/caddyfile.ts";

// site directives of the assembler's own that come first: a misspelt directive as close to
// two names is taken for the one registered first (`ls` for `tls`, not `fs`)
registerDirective("bind", parseBind);
registerDirective("tls", parseTLS);

// the syntax the handlers' table names (each set once: several entries may share a file)
const sets = new Set<SyntaxSet>();
for (const e of [...HANDLERS, ...SYNTAX_ONLY]) if (e.syntax) sets.add(await e.syntax());
for (const set of sets) registerSyntaxSet(set);
// the handlers of the metrics and tracing apps, which register their own modules
registerSyntaxSet(metricsSyntax);
registerSyntaxSet(tracingSyntax);

// global options
registerGeneralOptions();
registerTLSOptions();

// directives
registerDirective("log", (h) => parseLog(h));
registerHandlerDirective("reverse_proxy", parseReverseProxy);
registerHandlerDirective("copy_response", parseCopyResponse);
registerHandlerDirective("copy_response_headers", parseCopyResponseHeaders);
registerDirective("forward_auth", parseForwardAuth);
registerDirective("php_fastcgi", parsePHPFastCGI);

// request matchers
for (const m of ["host", "path", "method"]) registerSyntax(`http.matchers.${m}`, listMatcher(m));
registerSyntax("http.matchers.path_regexp", pathRegexpMatcher);
registerSyntax("http.matchers.query", queryMatcher);
registerSyntax("http.matchers.header", headerMatcher);
registerSyntax("http.matchers.header_regexp", fieldRegexpMatcher("header_regexp"));
registerSyntax("http.matchers.vars_regexp", fieldRegexpMatcher("vars_regexp"));
registerSyntax("http.matchers.protocol", protocolMatcher);
registerSyntax("http.matchers.remote_ip", ipMatcher("remote_ip"));
registerSyntax("http.matchers.client_ip", ipMatcher("client_ip"));
registerSyntax("http.matchers.vars", varsMatcher);
registerSyntax("http.matchers.not", notMatcher);
registerSyntax("http.matchers.expression", expressionMatcher);
registerSyntax("http.matchers.tls", tlsMatcher);
registerSyntax("http.matchers.url_pattern", urlPatternMatcher);

// handler parts
registerProxySyntaxes();
registerSyntax("http.reverse_proxy.transport.fastcgi", fastcgiTransport);
registerListenerWrapperSyntaxes();
registerSyntax("http.ip_sources.static", staticIPSource);

// logging
registerSyntax("caddy.logging.writers.file", fileWriter);
registerSyntax("caddy.logging.writers.net", netWriter);
registerSyntax("caddy.logging.encoders.console", plainEncoder);
registerSyntax("caddy.logging.encoders.json", plainEncoder);
registerEncoderSyntaxes();

// tls
registerIssuerSyntaxes();
registerClientAuthSyntaxes();

// storage, dns
registerSyntax("caddy.storage.file_system", fileSystemStorage);
registerSyntax("dns.providers.mock", mockDNSProvider);
registerSyntax("dns.providers.challtestsrv", challtestsrvSyntax);
registerSyntax("tls.client_auth.verifier.dummy", () => ({}));
