/**
 * Registers every module of the `http` app (the app, matchers, handlers, ip sources) with the
 * module registry. Importing this file is enough to make `apps.http` configs work.
 *
 * @example
 * ```ts
 * import "./mod.ts";
 * import { getModule } from "../module.ts";
 * getModule("http.handlers.static_response"); // defined
 * ```
 *
 * @module
 */
import { getModule, type ModuleDefinition, registerModule } from "../module.ts";
import { httpAppModule } from "./app.ts";
import { authenticationModule } from "./handlers/authentication.ts";
import { encodeModule } from "./handlers/encode.ts";
import { errorModule } from "./handlers/error.ts";
import { fileServerModule } from "./handlers/file_server/mod.ts";
import { headersModule } from "./handlers/headers.ts";
import { mapModule } from "./handlers/map.ts";
import { reverseProxyModule } from "./handlers/reverse_proxy/mod.ts";
import { requestBodyModule } from "./handlers/request_body.ts";
import { rewriteModule } from "./handlers/rewrite.ts";
import { staticResponseModule } from "./handlers/static_response.ts";
import { subrouteModule } from "./handlers/subroute.ts";
import { varsModule } from "./handlers/vars.ts";
import { staticIPSourceModule } from "./ip_source_static.ts";
import { expressionMatcherModule } from "./matchers/expression.ts";
import { headerMatcherModule } from "./matchers/header.ts";
import { headerRegexpMatcherModule } from "./matchers/header_regexp.ts";
import { hostMatcherModule } from "./matchers/host.ts";
import { methodMatcherModule } from "./matchers/method.ts";
import { notMatcherModule } from "./matchers/not.ts";
import { pathMatcherModule } from "./matchers/path.ts";
import { pathRegexpMatcherModule } from "./matchers/path_regexp.ts";
import { protocolMatcherModule } from "./matchers/protocol.ts";
import { queryMatcherModule } from "./matchers/query.ts";
import { clientIPMatcherModule, remoteIPMatcherModule } from "./matchers/remote_ip.ts";
import { varsMatcherModule, varsRegexpMatcherModule } from "./matchers/vars.ts";

// Every module definition of the http app.
const httpModules: ModuleDefinition[] = [
  httpAppModule,
  staticIPSourceModule,
  hostMatcherModule,
  methodMatcherModule,
  pathMatcherModule,
  pathRegexpMatcherModule,
  headerMatcherModule,
  headerRegexpMatcherModule,
  queryMatcherModule,
  protocolMatcherModule,
  remoteIPMatcherModule,
  clientIPMatcherModule,
  notMatcherModule,
  varsMatcherModule,
  varsRegexpMatcherModule,
  expressionMatcherModule,
  staticResponseModule,
  subrouteModule,
  headersModule,
  rewriteModule,
  varsModule,
  mapModule,
  errorModule,
  authenticationModule,
  requestBodyModule,
  encodeModule,
  fileServerModule,
  reverseProxyModule,
] as ModuleDefinition[];

for (const m of httpModules) {
  if (!getModule(m.id)) registerModule(m);
}
