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
import { staticResponseModule } from "./handlers/static_response.ts";
import { subrouteModule } from "./handlers/subroute.ts";
import { staticIPSourceModule } from "./ip_source_static.ts";
import { hostMatcherModule } from "./matchers/host.ts";
import { methodMatcherModule } from "./matchers/method.ts";
import { pathMatcherModule } from "./matchers/path.ts";

/** Every module definition of the http app. */
export const httpModules: ModuleDefinition[] = [
  httpAppModule,
  staticIPSourceModule,
  hostMatcherModule,
  methodMatcherModule,
  pathMatcherModule,
  staticResponseModule,
  subrouteModule,
] as ModuleDefinition[];

for (const m of httpModules) {
  if (!getModule(m.id)) registerModule(m);
}

export { HttpApp } from "./app.ts";
