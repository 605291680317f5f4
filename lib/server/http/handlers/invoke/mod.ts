/**
 * `invoke` (Caddy's `http.handlers.invoke`): runs the server's named route `name`
 * (`named_routes`), which continues into the rest of this chain like any route. A name the
 * server does not have fails the request with 500, as in Caddy; so do routes that invoke
 * each other more than 100 levels deep (a loop). The config is {@linkcode InvokeConfig}
 * (`config.ts`); the Gatehousefile syntax is `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import { HandlerError } from "../../errors.ts";
import type { HttpHandler } from "../../handler.ts";
import { decodeInvoke, type InvokeConfig } from "./config.ts";

/** Largest nesting of `invoke` within one request. */
export const MAX_INVOKE_DEPTH = 100;

/** Builds an invoke handler from its decoded config. */
export function invoke(config: InvokeConfig): HttpHandler {
  const name = config.name;
  return {
    async serveHTTP(c, next) {
      const route = c.server.namedRoutes?.get(name);
      if (!route) throw new HandlerError(500, `invoke: route '${name}' not found`, "invoke");
      if (c.invokeDepth >= MAX_INVOKE_DEPTH) {
        throw new HandlerError(
          500,
          `invoke: named routes nested more than ${MAX_INVOKE_DEPTH} deep ('${name}' again)`,
          "invoke",
        );
      }
      c.invokeDepth++;
      try {
        return await route.for(next)(c);
      } finally {
        c.invokeDepth--;
      }
    },
  };
}

/** Registry entry. */
export const invokeModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.invoke",
  create: (config) => invoke(decodeInvoke(config)),
};
