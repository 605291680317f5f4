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
 * list, as in Caddy. The config is {@linkcode PushConfig} (`config.ts`); the Gatehousefile
 * syntax is `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../../../module/mod.ts";
import type { Logger } from "../../../module/instance.ts";
import type { RequestContext } from "../../context.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { compileHeaderOps, type HeaderOps } from "../../header_ops.ts";
import { compileTemplate, type Template } from "../../replacer.ts";
import { decodePush, type PushConfig } from "./config.ts";
import { isRemoteResource, parseLinkHeader, pushPath } from "./link.ts";

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

interface Resource {
  method: "GET" | "HEAD";
  target: Template;
}

/** A push handler. */
export class Push implements HttpHandler {
  #resources: Resource[];
  #ops: HeaderOps;
  #log: Logger;

  /** Compiles a decoded config; `log` gets the pushes at DEBUG level. */
  constructor(config: PushConfig, log: Logger) {
    // as Caddy's ReplaceAll(target, "."): an unknown or empty placeholder becomes "."
    this.#resources = (config.resources ?? []).map((r) => ({
      method: (r.method || "GET") as "GET" | "HEAD",
      target: compileTemplate(r.target ?? "", { empty: "." }),
    }));
    this.#ops = compileHeaderOps(config.headers);
    this.#log = log;
  }

  async serveHTTP(c: RequestContext, next: Next): Promise<Response> {
    const push = c.info.push;
    if (!push || c.headers.has(PUSH_HEADER)) return next(c);
    const headers = this.#pushHeaders(c);
    const scheme = c.info.tls ? "https" : "http";
    for (const r of this.#resources) {
      const target = r.target.render(c);
      if (this.#log.enabled("DEBUG")) {
        this.#log.debug("pushing resource", {
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
      if (this.#log.enabled("DEBUG")) {
        this.#log.debug("pushing Link resources", { linked: [links] });
      }
      c.setVar(PUSHED_LINK, true);
      await pushLinks(c, links, headers);
    }
    return res;
  }

  /** The fields of this request's push requests. */
  #pushHeaders(c: RequestContext): Headers {
    const h = new Headers({ [PUSH_HEADER]: "1" });
    for (const name of SAFE_HEADERS) {
      const v = c.headers.get(name);
      if (v !== null) h.set(name, v);
    }
    this.#ops.apply(h, c);
    return h;
  }
}

/** Pushes the response's Link resources; stops at the first that fails. */
async function pushLinks(c: RequestContext, links: string, headers: Headers): Promise<void> {
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
}

/** Registry entry. */
export const pushModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.push",
  create: (config, ctx: ProvisionContext) =>
    new Push(decodePush(config), ctx.logger("http.handlers.push")),
};
