/**
 * `http.handlers.subroute`: a nested route list (`routes`) with its own `errors` routes; when
 * no nested route terminates, the outer chain continues. The config is
 * {@linkcode SubrouteConfig} (`config.ts`); the Gatehousefile syntax (`route`, `handle`,
 * `handle_errors`) is `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../../../module/mod.ts";
import type { RequestContext } from "../../context.ts";
import { responseError, toHandlerError } from "../../errors.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { compileRoutes, emptyHandler, provisionRoutes, RouteListCache } from "../../routes.ts";
import { decodeSubroute, decodeSubrouteErrors, type SubrouteConfig } from "./config.ts";

/** Provisions a subroute handler from its decoded config (its routes and error routes). */
export async function subroute(
  config: SubrouteConfig,
  ctx: ProvisionContext,
): Promise<HttpHandler> {
  const where = "http.handlers.subroute";
  const routes = new RouteListCache(await provisionRoutes(config.routes, ctx, `${where}.routes`));
  let errorChain: Next | null = null;
  const errors = decodeSubrouteErrors(config);
  if (errors) {
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
}

/** Registry entry. */
export const subrouteModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.subroute",
  create: (config, ctx) => subroute(decodeSubroute(config), ctx),
};
