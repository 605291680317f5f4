/**
 * `headers` handler: request header operations, and response header operations applied either
 * before the rest of the chain (to the headers the response will carry) or, when `deferred`
 * or `require` is set, to the final response.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { checkFields, optBool, optObject, type Raw } from "../config.ts";
import type { HttpHandler } from "../handler.ts";
import { mutableResponse, parseHeaderOps, parseResponseMatcher } from "../header_ops.ts";

/** Registry entry. */
export const headersModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.headers",
  create(config) {
    const where = "http.handlers.headers";
    checkFields(config, ["handler", "request", "response"], where);
    const reqRaw = optObject(config, "request", where);
    const request = parseHeaderOps(reqRaw, `${where}.request`);
    const resRaw = optObject(config, "response", where);
    let response = parseHeaderOps(undefined, "");
    let deferred = false;
    let require = null;
    if (resRaw) {
      const { deferred: d, require: r, ...ops } = resRaw as Raw;
      response = parseHeaderOps(ops, `${where}.response`);
      deferred = optBool(resRaw, "deferred", where) ?? false;
      if (r) require = parseResponseMatcher(r as Raw, `${where}.response.require`);
      void d;
    }
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
  },
};
