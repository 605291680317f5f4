/**
 * `push` handler (HTTP/2 server push, Caddy's `http.handlers.push`): before the rest of the
 * chain runs, pushes the configured `resources` (targets may hold placeholders); when the
 * response carries `Link` fields, pushes each linked resource on the request's own origin that
 * is not marked `nopush`, before the response goes out (once per request, however many push
 * handlers run). Push requests carry `Caddy-Push: 1` (a request with it is never pushed from,
 * so pushes do not recurse), the client's `Accept`, `Accept-Encoding`, `Accept-Language`,
 * `Cache-Control` and `User-Agent`, then the configured `headers` operations; each is served
 * through the server's routes like any request.
 *
 * Pushing needs an HTTP/2 connection whose client accepts pushes (`ServeInfo.push`, node
 * listener engine); anywhere else (HTTP/1.1, a client that sent SETTINGS_ENABLE_PUSH=0) the
 * handler passes the request through, as Caddy's does. The first push that fails (too many
 * streams, push turned off meanwhile, a target that cannot be pushed) ends the pushing for that
 * list, as in Caddy.
 *
 * @module
 */
import type { ModuleDefinition } from "../../module/mod.ts";
import { asObject, checkFields, optArray, optObject, optString, type Raw } from "../config.ts";
import type { RequestContext } from "../context.ts";
import { ConfigError } from "../../config/error.ts";
import type { HttpHandler } from "../handler.ts";
import { parseHeaderOps } from "../header_ops.ts";
import { compileTemplate, hasPlaceholder, type Template } from "../replacer.ts";
import { isRemoteResource, parseLinkHeader, pushPath } from "./push_link.ts";

/** The field push requests carry, so that a pushed request never pushes again. */
export const PUSH_HEADER = "Caddy-Push";

/** The request variable that records that the response's Link fields were pushed. */
const PUSHED_LINK = "http.handlers.push.pushed_link";

/** Request fields a push request takes from the request it is pushed for. */
const SAFE_HEADERS = [
  "accept-encoding",
  "accept-language",
  "accept",
  "cache-control",
  "user-agent",
];

/**
 * Fields a promised request cannot carry (it has no body and its target is absolute; HTTP/2
 * forbids connection-specific ones).
 */
const FORBIDDEN = new Set([
  "content-length",
  "content-encoding",
  "trailer",
  "te",
  "expect",
  "host",
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

interface Resource {
  method: "GET" | "HEAD";
  target: Template;
}

function bad(where: string, msg: string): never {
  throw new ConfigError("invalid_config", `${where}: ${msg}`);
}

function resources(config: Raw, where: string): Resource[] {
  return (optArray(config, "resources", where) ?? []).map((r, i) => {
    const at = `${where}.resources[${i}]`;
    const o = asObject(r, at);
    checkFields(o, ["method", "target"], at);
    const method = optString(o, "method", at) ?? "";
    if (method !== "" && method !== "GET" && method !== "HEAD") {
      bad(`${at}.method`, `must be GET or HEAD (a pushed request has no body), got ${method}`);
    }
    const target = optString(o, "target", at) ?? "";
    if (target === "") bad(`${at}.target`, "required: the path of the resource to push");
    if (!hasPlaceholder(target) && !/^(\/(?!\/)|https?:\/\/)/i.test(target)) {
      bad(
        `${at}.target`,
        `must be an absolute path (or an http/https URL on the same host), got ${target}`,
      );
    }
    // as Caddy's ReplaceAll(target, "."): an unknown or empty placeholder becomes "."
    return {
      method: (method || "GET") as "GET" | "HEAD",
      target: compileTemplate(target, { empty: "." }),
    };
  });
}

function headerOps(config: Raw, where: string) {
  const raw = optObject(config, "headers", where);
  for (const op of ["add", "set"]) {
    for (const name of Object.keys(optObject(raw ?? {}, op, `${where}.headers`) ?? {})) {
      const n = name.toLowerCase();
      if (n.startsWith(":") || FORBIDDEN.has(n)) {
        bad(`${where}.headers.${op}.${name}`, "a pushed request cannot carry this field");
      }
    }
  }
  return parseHeaderOps(raw, `${where}.headers`);
}

/** Registry entry. */
export const pushModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.push",
  create(config, ctx) {
    const where = "http.handlers.push";
    checkFields(config, ["handler", "resources", "headers"], where);
    const list = resources(config, where);
    const ops = headerOps(config, where);
    const log = ctx.logger("http.handlers.push");

    /** The fields of this request's push requests. */
    const pushHeaders = (c: RequestContext): Headers => {
      const h = new Headers({ [PUSH_HEADER]: "1" });
      for (const name of SAFE_HEADERS) {
        const v = c.headers.get(name);
        if (v !== null) h.set(name, v);
      }
      ops.apply(h, c);
      return h;
    };

    /** Pushes the response's Link resources; stops at the first that fails. */
    const pushLinks = async (c: RequestContext, links: string, headers: Headers) => {
      const push = c.info.push!;
      const scheme = c.info.tls ? "https" : "http";
      for (const link of parseLinkHeader(links)) {
        if ("nopush" in link.params || isRemoteResource(link.uri)) continue;
        const path = pushPath(link.uri, scheme, c.host);
        if (path === null) return;
        try {
          await push("GET", path, headers);
        } catch {
          return;
        }
      }
    };

    return {
      async serveHTTP(c, next) {
        const push = c.info.push;
        if (!push || c.headers.has(PUSH_HEADER)) return next(c);
        const headers = pushHeaders(c);
        const scheme = c.info.tls ? "https" : "http";
        for (const r of list) {
          const target = r.target.render(c);
          if (log.enabled("DEBUG")) {
            log.debug("pushing resource", {
              uri: c.origQuery ? `${c.origRawPath}?${c.origQuery}` : c.origRawPath,
              push_method: r.method,
              push_target: target,
            });
          }
          const path = pushPath(target, scheme, c.host);
          if (path === null) break;
          try {
            await push(r.method, path, headers);
          } catch {
            break; // usually: the client turned push off, or too many streams are open
          }
        }
        const res = await next(c);
        const links = res.headers.get("link") ?? c.respHeaders?.get("link") ?? null;
        if (links !== null && c.getVar(PUSHED_LINK) === undefined) {
          if (log.enabled("DEBUG")) log.debug("pushing Link resources", { linked: [links] });
          c.setVar(PUSHED_LINK, true);
          await pushLinks(c, links, headers);
        }
        return res;
      },
    };
  },
};
