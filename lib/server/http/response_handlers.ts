/**
 * Response handlers (Caddy's `caddyhttp.ResponseHandler`), shared by `reverse_proxy`'s
 * `handle_response` and the `intercept` handler: each has an optional response `match`
 * (`status_code` list where one digit is a class, `headers`), and either a `status_code`
 * (number or string with placeholders) that only replaces the status, or `routes` that take
 * over the response. The first handler whose matcher accepts a response is the one used.
 *
 * @module
 */
import type { ProvisionContext } from "../module/mod.ts";
import { Decoder } from "../config/decode.ts";
import type { RequestContext } from "./context.ts";
import { HandlerError } from "./errors.ts";
import { parseResponseMatcher, type ResponseMatcher } from "./header_ops.ts";
import { compileTemplate, type Template } from "./replacer.ts";
import { provisionRoutes, type RouteConfig, RouteListCache } from "./routes.ts";
import type { ResponseMatcherConfig } from "./response_matcher.ts";

/** A response handler (Caddy's `caddyhttp.ResponseHandler`). */
export type ResponseHandlerConfig = {
  /** The responses it takes (all when absent). */
  match?: ResponseMatcherConfig;
  /** Only replace the status (a number or a placeholder); 0 or "" keeps it. */
  status_code?: number | string;
  /** Routes that take over the response. */
  routes?: RouteConfig[];
};

/** One provisioned response handler. */
export interface ResponseHandler {
  /** Null matches every response. */
  match: ResponseMatcher | null;
  /** The replacement status, when this handler only changes the status. */
  status: Template | null;
  /** Routes that take over the response, when set. */
  routes: RouteListCache | null;
}

/**
 * Decodes and checks a `handle_response` list of the handler at `where` (fields, matchers,
 * status types); the routes are provisioned by {@linkcode buildResponseHandlers}.
 *
 * @example
 * ```ts
 * import { decodeResponseHandlers } from "./response_handlers.ts";
 * decodeResponseHandlers([{ match: { status_code: [5] }, status_code: 503 }], "intercept");
 * ```
 */
export function decodeResponseHandlers(
  raw: unknown,
  where: string,
): ResponseHandlerConfig[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) Decoder.of({}, `${where}.handle_response`).fail("must be an array");
  return (raw as unknown[]).map((v, i) => {
    const d = Decoder.of(v, `${where}.handle_response[${i}]`);
    d.fields(["match", "status_code", "routes"]);
    const out: ResponseHandlerConfig = {};
    const match = d.value("match");
    if (match !== undefined && match !== null) {
      parseResponseMatcher(Decoder.of(match, d.at("match")).raw, d.at("match"));
      out.match = match as ResponseMatcherConfig;
    }
    const sc = d.value("status_code");
    if (sc !== undefined && sc !== null) {
      if (typeof sc !== "number" && typeof sc !== "string") {
        d.failAt("status_code", "must be a number or string");
      }
      out.status_code = sc as number | string;
    }
    const routes = d.value("routes");
    if (routes !== undefined && routes !== null) out.routes = routes as RouteConfig[];
    return out;
  });
}

/** Provisions a decoded `handle_response` list (its routes' modules). */
export async function buildResponseHandlers(
  list: readonly ResponseHandlerConfig[] | undefined,
  ctx: ProvisionContext,
  where: string,
): Promise<ResponseHandler[]> {
  const out: ResponseHandler[] = [];
  for (const [i, h] of (list ?? []).entries()) {
    const w = `${where}.handle_response[${i}]`;
    const match = h.match ? parseResponseMatcher(h.match, `${w}.match`) : null;
    const sc = h.status_code;
    const status = sc === undefined || sc === "" || sc === 0 ? null : compileTemplate(String(sc));
    const routes = h.routes === undefined
      ? null
      : new RouteListCache(await provisionRoutes(h.routes, ctx, `${w}.routes`));
    out.push({ match, status, routes });
  }
  return out;
}

/**
 * Decodes and provisions a `handle_response` list.
 *
 * @example
 * ```ts ignore
 * const handlers = await provisionResponseHandlers(config.handle_response, ctx, "intercept");
 * ```
 */
export async function provisionResponseHandlers(
  raw: unknown,
  ctx: ProvisionContext,
  where: string,
): Promise<ResponseHandler[]> {
  return await buildResponseHandlers(decodeResponseHandlers(raw, where), ctx, where);
}

/** The first handler that accepts a response, or null. */
export function selectResponseHandler(
  handlers: readonly ResponseHandler[],
  status: number,
  headers: Headers,
): ResponseHandler | null {
  for (const h of handlers) if (h.match === null || h.match.match(status, headers)) return h;
  return null;
}

/** Renders a handler's replacement status; a non-number is a 500, as in Caddy. */
export function renderStatus(t: Template, c: RequestContext, trace: string): number {
  const text = t.render(c);
  const n = Number(text);
  if (!/^[+-]?\d+$/.test(text.trim()) || !Number.isSafeInteger(n)) {
    throw new HandlerError(500, `invalid status code ${JSON.stringify(text)}`, trace);
  }
  return n;
}
