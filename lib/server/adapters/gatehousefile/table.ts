/**
 * Every directive, global option and module syntax the Gatehousefile knows: the syntax sets
 * the module tables name (loaded here, when the adapter loads), and one line each for the
 * syntax not yet named by a table and for the assembler's own (global options, site
 * directives). A module's syntax lives beside the module.
 *
 * @module
 */
import { parseError } from "../../http/handlers/error_caddyfile.ts";
import {
  parseHandle,
  parseHandleErrors,
  parseInvoke,
  parseRoute,
} from "../../http/handlers/subroute_caddyfile.ts";
import {
  parseFilesystem,
  parseLogName,
  parseLogSkip,
  parseRoot,
  parseVars,
} from "../../http/handlers/vars_caddyfile.ts";
import { parseHeader, parseRequestHeader } from "../../http/handlers/headers_caddyfile.ts";
import {
  parseHandlePath,
  parseMethod,
  parseRewrite,
  parseURI,
} from "../../http/handlers/rewrite_caddyfile.ts";
import { parseMap } from "../../http/handlers/map_caddyfile.ts";
import { gzipEncoding, parseEncode, zstdEncoding } from "../../http/handlers/encode_caddyfile.ts";
import { parseIntercept } from "../../http/handlers/intercept_caddyfile.ts";
import { parseLogAppend } from "../../http/handlers/log_append_caddyfile.ts";
import { parsePush } from "../../http/handlers/push_caddyfile.ts";
import { parseACMEServer } from "../../http/handlers/acme_server_caddyfile.ts";
import { parseMetrics, parseTracing } from "../../http/handlers/observability_caddyfile.ts";
import { parseBasicAuth } from "../../http/handlers/authentication_caddyfile.ts";
import {
  parseRequestBody,
  parseTemplates,
  parseTimeouts,
} from "../../http/handlers/templates_caddyfile.ts";
import { parseLog } from "./logs.ts";
import { registerGeneralOptions } from "./options.ts";
import { registerTLSOptions } from "./options_tls.ts";
import {
  registerDirective,
  registerHandlerDirective,
  registerSyntax,
  registerSyntaxSet,
  type SyntaxEntry,
  type SyntaxSet,
} from "../../caddyfile/registry.ts";
import { HANDLERS } from "../../http/handlers/mod.ts";
import { MATCHERS } from "../../http/matchers/mod.ts";
import { IP_SOURCES } from "../../http/ip_sources.ts";
import { LISTENER_WRAPPERS } from "../../listeners/mod.ts";
import { DNS_PROVIDERS, TLS_MODULES } from "../../tls/mod.ts";
import { LOGGING_MODULES } from "../../logging/mod.ts";
import { STORAGE_MODULES } from "../../storage/register.ts";
import { parseBind } from "./site_directives.ts";

// the syntax the module tables name (each set once: several entries may share a file)
const sets = new Set<SyntaxSet>();
const tables: readonly (readonly SyntaxEntry[])[] = [
  HANDLERS,
  MATCHERS,
  IP_SOURCES,
  LISTENER_WRAPPERS,
  TLS_MODULES,
  DNS_PROVIDERS,
  LOGGING_MODULES,
  STORAGE_MODULES,
];
for (const table of tables) for (const e of table) if (e.syntax) sets.add(await e.syntax());
for (const set of sets) registerSyntaxSet(set);

// global options
registerGeneralOptions();
registerTLSOptions();

// directives
registerDirective("bind", parseBind);
registerHandlerDirective("fs", parseFilesystem);
registerDirective("root", parseRoot);
registerHandlerDirective("vars", parseVars);
registerHandlerDirective("error", parseError);
registerHandlerDirective("route", parseRoute);
registerHandlerDirective("handle", parseHandle);
registerDirective("handle_errors", parseHandleErrors);
registerHandlerDirective("invoke", parseInvoke);
registerDirective("log", (h) => parseLog(h));
registerHandlerDirective("skip_log", parseLogSkip);
registerHandlerDirective("log_skip", parseLogSkip);
registerHandlerDirective("log_name", parseLogName);
registerDirective("header", parseHeader);
registerDirective("request_header", parseRequestHeader);
registerDirective("rewrite", parseRewrite);
registerHandlerDirective("method", parseMethod);
registerHandlerDirective("uri", parseURI);
registerDirective("handle_path", parseHandlePath);
registerHandlerDirective("map", parseMap);
registerHandlerDirective("encode", parseEncode);
registerHandlerDirective("intercept", parseIntercept);
registerHandlerDirective("log_append", parseLogAppend);
registerHandlerDirective("push", parsePush);
registerDirective("acme_server", parseACMEServer);
registerHandlerDirective("metrics", parseMetrics);
registerHandlerDirective("tracing", parseTracing);
registerHandlerDirective("basicauth", parseBasicAuth);
registerHandlerDirective("basic_auth", parseBasicAuth);
registerHandlerDirective("templates", parseTemplates);
registerHandlerDirective("request_body", parseRequestBody);
registerHandlerDirective("timeouts", parseTimeouts);

// handler parts
registerSyntax("http.encoders.gzip", gzipEncoding);
registerSyntax("http.encoders.zstd", zstdEncoding);
