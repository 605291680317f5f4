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
import { asObject, checkFields, type Raw } from "./config.ts";
import type { RequestContext } from "./context.ts";
import { HandlerError } from "./errors.ts";
import { ConfigError } from "../config/error.ts";
import { parseResponseMatcher, type ResponseMatcher } from "./header_ops.ts";
import { compileTemplate, type Template } from "./replacer.ts";
import type { ResponseMatcherConfig } from "./response_matcher.ts";
import { provisionRoutes, type RawRoute, RouteListCache } from "./routes.ts";

/** The config of a response handler (Caddy's `caddyhttp.ResponseHandler`). */
export type ResponseHandlerConfig = {
  /** The responses it handles; every response when absent. */
  match?: ResponseMatcherConfig;
  /**
   * Write the original response with this status instead (a number, or a string with
   * placeholders); takes priority over `routes`.
   */
  status_code?: string | number;
  /** The routes that take over the response (the original body is then not written). */
  routes?: RawRoute[];
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
 * Provisions a `handle_response` list.
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
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    throw new ConfigError("invalid_config", `${where}.handle_response: must be an array`);
  }
  const out: ResponseHandler[] = [];
  for (let i = 0; i < raw.length; i++) {
    const w = `${where}.handle_response[${i}]`;
    const o = asObject(raw[i], w);
    checkFields(o, ["match", "status_code", "routes"], w);
    const match = o.match === undefined || o.match === null
      ? null
      : parseResponseMatcher(asObject(o.match, `${w}.match`) as Raw, `${w}.match`);
    const sc = o.status_code;
    if (sc !== undefined && sc !== null && typeof sc !== "number" && typeof sc !== "string") {
      throw new ConfigError("invalid_config", `${w}.status_code: must be a number or string`);
    }
    const status = sc === undefined || sc === null || sc === "" || sc === 0
      ? null
      : compileTemplate(String(sc));
    const routes = o.routes === undefined || o.routes === null
      ? null
      : new RouteListCache(await provisionRoutes(o.routes, ctx, `${w}.routes`));
    out.push({ match, status, routes });
  }
  return out;
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
