/**
 * The shapes of http modules: middleware handlers (`http.handlers.*`) and request matchers
 * (`http.matchers.*`), Caddy's `MiddlewareHandler` and `RequestMatcher` in web-standard form:
 * a handler gets the request context and the rest of the chain and returns a `Response`.
 *
 * @module
 */
import type { ModuleInstance } from "../module/instance.ts";
import type { Next, RequestContext } from "./context.ts";

export type { Next };

/** A module in `http.handlers`: runs for matched requests, calls `next` to continue the chain. */
export interface HttpHandler extends ModuleInstance {
  /** Handles the request or calls `next`; throw a HandlerError for an error status. */
  serveHTTP(c: RequestContext, next: Next): Response | Promise<Response>;
}

/** A module in `http.matchers`: a yes/no test of a request. */
export interface RequestMatcher extends ModuleInstance {
  /** True when the request matches. */
  match(c: RequestContext): boolean;
}

/** Caddy's empty handler: the end of a chain writes nothing, so the client gets 200 and no body. */
export const emptyResponse: Next = () => new Response(null, { status: 200 });
