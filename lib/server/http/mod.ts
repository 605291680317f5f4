/**
 * Registers every module of the `http` app (the app, matchers, handlers, ip sources) with the
 * module registry. Importing this file is enough to make `apps.http` configs work.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module/mod.ts";
 * getModule("http.handlers.static_response"); // defined
 * ```
 *
 * @module
 */
import { getModule, lazyModule, type ModuleDefinition, registerModule } from "../module/mod.ts";
import { httpAppModule } from "./app.ts";

const lazy = lazyModule;

// Every module definition of the http app.
const httpModules: ModuleDefinition[] = [
  httpAppModule,
  lazy(
    "http.ip_sources.static",
    async () => (await import("./ip_source_static.ts")).staticIPSourceModule as ModuleDefinition,
  ),
  lazy("http.matchers.host", async () => (await import("./matchers/host.ts")).hostMatcherModule),
  lazy(
    "http.matchers.method",
    async () => (await import("./matchers/method.ts")).methodMatcherModule,
  ),
  lazy("http.matchers.path", async () => (await import("./matchers/path.ts")).pathMatcherModule),
  lazy(
    "http.matchers.path_regexp",
    async () => (await import("./matchers/path_regexp.ts")).pathRegexpMatcherModule,
  ),
  lazy(
    "http.matchers.header",
    async () => (await import("./matchers/header.ts")).headerMatcherModule,
  ),
  lazy(
    "http.matchers.header_regexp",
    async () => (await import("./matchers/header_regexp.ts")).headerRegexpMatcherModule,
  ),
  lazy("http.matchers.query", async () => (await import("./matchers/query.ts")).queryMatcherModule),
  lazy(
    "http.matchers.protocol",
    async () => (await import("./matchers/protocol.ts")).protocolMatcherModule,
  ),
  lazy(
    "http.matchers.remote_ip",
    async () => (await import("./matchers/remote_ip.ts")).remoteIPMatcherModule,
  ),
  lazy(
    "http.matchers.client_ip",
    async () => (await import("./matchers/remote_ip.ts")).clientIPMatcherModule,
  ),
  lazy("http.matchers.not", async () => (await import("./matchers/not.ts")).notMatcherModule),
  lazy("http.matchers.vars", async () => (await import("./matchers/vars.ts")).varsMatcherModule),
  lazy(
    "http.matchers.vars_regexp",
    async () => (await import("./matchers/vars.ts")).varsRegexpMatcherModule,
  ),
  lazy(
    "http.matchers.expression",
    async () => (await import("./matchers/expression.ts")).expressionMatcherModule,
  ),
  lazy(
    "http.matchers.url_pattern",
    async () => (await import("./matchers/url_pattern.ts")).urlPatternMatcherModule,
  ),
  lazy("http.matchers.file", async () => (await import("./matchers/file.ts")).fileMatcherModule),
  lazy(
    "http.handlers.static_response",
    async () => (await import("./handlers/static_response.ts")).staticResponseModule,
  ),
  lazy(
    "http.handlers.subroute",
    async () => (await import("./handlers/subroute.ts")).subrouteModule,
  ),
  lazy("http.handlers.headers", async () => (await import("./handlers/headers.ts")).headersModule),
  lazy("http.handlers.push", async () => (await import("./handlers/push.ts")).pushModule),
  lazy("http.handlers.rewrite", async () => (await import("./handlers/rewrite.ts")).rewriteModule),
  lazy("http.handlers.vars", async () => (await import("./handlers/vars.ts")).varsModule),
  lazy("http.handlers.map", async () => (await import("./handlers/map.ts")).mapModule),
  lazy("http.handlers.error", async () => (await import("./handlers/error.ts")).errorModule),
  lazy(
    "http.handlers.authentication",
    async () => (await import("./handlers/authentication.ts")).authenticationModule,
  ),
  lazy(
    "http.handlers.request_body",
    async () => (await import("./handlers/request_body.ts")).requestBodyModule,
  ),
  lazy(
    "http.handlers.intercept",
    async () => (await import("./handlers/intercept.ts")).interceptModule,
  ),
  lazy(
    "http.handlers.copy_response",
    async () => (await import("./handlers/reverse_proxy/handle_response.ts")).copyResponseModule,
  ),
  lazy(
    "http.handlers.copy_response_headers",
    async () =>
      (await import("./handlers/reverse_proxy/handle_response.ts")).copyResponseHeadersModule,
  ),
  lazy("http.handlers.invoke", async () => (await import("./handlers/invoke.ts")).invokeModule),
  lazy(
    "http.handlers.log_append",
    async () => (await import("./handlers/log_append.ts")).logAppendModule,
  ),
  lazy("http.handlers.encode", async () => (await import("./handlers/encode.ts")).encodeModule),
  lazy(
    "http.handlers.file_server",
    async () => (await import("./handlers/file_server/mod.ts")).fileServerModule,
  ),
  lazy(
    "http.handlers.acme_server",
    async () => (await import("./handlers/acme_server/mod.ts")).acmeServerModule,
  ),
  lazy(
    "http.handlers.reverse_proxy",
    async () => (await import("./handlers/reverse_proxy/mod.ts")).reverseProxyModule,
  ),
  lazy(
    "admin.api.reverse_proxy",
    async () => (await import("./handlers/reverse_proxy/admin.ts")).reverseProxyAdminModule,
  ),
];

for (const m of httpModules) {
  if (!getModule(m.id)) registerModule(m);
}
