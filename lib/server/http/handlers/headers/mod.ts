/**
 * `http.handlers.headers`: request header operations, and response header operations applied
 * either before the rest of the chain (to the headers the response will carry) or, when
 * `deferred` or `require` is set, to the final response. The config is
 * {@linkcode HeadersConfig} (`config.ts`); the Gatehousefile syntax (`header`,
 * `request_header`) is `caddyfile.ts` and the JSON → Gatehousefile writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { HttpHandler } from "../../handler.ts";
import { compileHeaderOps, mutableResponse } from "../../header_ops.ts";
import { compileResponseMatcher } from "../../response_matcher.ts";
import { decodeHeaders, type HeadersConfig } from "./config.ts";

export type { HeadersConfig } from "./config.ts";

/** Builds a headers handler from its decoded config. */
export function headers(config: HeadersConfig): HttpHandler {
  const request = compileHeaderOps(config.request);
  const response = compileHeaderOps(config.response);
  const deferred = config.response?.deferred ?? false;
  const require = config.response?.require ? compileResponseMatcher(config.response.require) : null;
  const dropsServer = response.deletes("server");
  const dropsAltSvc = response.deletes("alt-svc");
  return {
    async serveHTTP(c, next) {
      if (request.size) {
        const h = c.mutableHeaders();
        request.apply(h, c);
        const host = h.get("host");
        if (host !== null && host !== c.host) c.host = host;
      }
      if (response.size === 0) return next(c);
      if (!deferred && require === null) {
        response.apply(c.responseHeaders(), c);
        if (dropsServer) c.serverHeader = false;
        if (dropsAltSvc) c.altSvc = null;
        if (dropsAltSvc) c.altSvc = null;
        return next(c);
      }
      let res = await next(c);
      if (require !== null && !require.match(res.status, res.headers)) return res;
      res = mutableResponse(res);
      if (dropsServer) c.serverHeader = false;
      if (dropsAltSvc) c.altSvc = null;
      response.apply(res.headers, c);
      return res;
    },
  };
}

/** Registry entry. */
export const headersModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.headers",
  create: (config) => headers(decodeHeaders(config)),
};
