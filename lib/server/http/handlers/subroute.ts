/**
 * `subroute`: a nested route list (`routes`) with its own `errors` routes; when no nested
 * route terminates, the outer chain continues.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { checkFields, optObject } from "../config.ts";
import type { RequestContext } from "../context.ts";
import { responseError, toHandlerError } from "../errors.ts";
import type { HttpHandler, Next } from "../handler.ts";
import { compileRoutes, emptyHandler, provisionRoutes, RouteListCache } from "../routes.ts";

/** Registry entry. */
export const subrouteModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.subroute",
  async create(config, ctx) {
    const where = "http.handlers.subroute";
    checkFields(config, ["handler", "routes", "errors"], where);
    const routes = new RouteListCache(await provisionRoutes(config.routes, ctx, `${where}.routes`));
    const errors = optObject(config, "errors", where);
    let errorChain: Next | null = null;
    if (errors) {
      checkFields(errors, ["routes"], `${where}.errors`);
      const list = await provisionRoutes(errors.routes, ctx, `${where}.errors.routes`);
      if (list.length) errorChain = compileRoutes(list, emptyHandler);
    }
    if (!errorChain) return { serveHTTP: (c, next) => routes.for(next)(c) };
    const handleError = (c: RequestContext, e: unknown) => {
      c.error = toHandlerError(e);
      return errorChain!(c);
    };
    return {
      async serveHTTP(c, next) {
        try {
          const res = await routes.for(next)(c);
          const err = responseError(res);
          return err ? handleError(c, err) : res;
        } catch (e) {
          return handleError(c, e);
        }
      },
    };
  },
};
