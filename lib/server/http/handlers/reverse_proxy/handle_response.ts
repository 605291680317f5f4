/**
 * `reverse_proxy`'s `handle_response` at run time, and the two handlers meant for its routes:
 * `copy_response` (sends the upstream response on, optionally with another `status_code`) and
 * `copy_response_headers` (copies the upstream's header fields, `include` or `exclude` some,
 * into the response being built, then continues). The routes run on the original request and
 * continue into the proxy's own `next`; the upstream body is dropped unless copied. Errors of
 * the routes are never retried against another upstream.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import { checkFields, optStrings } from "../../config.ts";
import type { RequestContext, UpstreamResponseHandling } from "../../context.ts";
import { HandlerError, toHandlerError } from "../../errors.ts";
import { ConfigError } from "../../../config/error.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import { renderStatus, type ResponseHandler } from "../../response_handlers.ts";
import { compileTemplate } from "../../replacer.ts";

/** What the proxy hands over for one upstream response. */
export interface UpstreamAnswer {
  /** Status code. */
  status: number;
  /** Header fields, hop-by-hop ones removed, names in lower case. */
  headers: [string, string][];
  /** The body, or null. */
  body: ReadableStream<Uint8Array> | Uint8Array | null;
  /** Builds the client response from it (the proxy's usual path), with an optional status. */
  finalize(status?: number): Response;
}

/** Thrown out of the retry loop as is: the round trip succeeded, the routes failed. */
export class RoutesFailed {
  /** Wraps the routes' error. */
  constructor(readonly error: HandlerError) {}
}

/**
 * Runs the `handle_response` handler chosen for an upstream answer: with a `status_code`
 * only, the usual response with that status; with routes, whatever they answer.
 */
export async function handleUpstreamResponse(
  c: RequestContext,
  handler: ResponseHandler,
  answer: UpstreamAnswer,
  next: Next,
): Promise<Response> {
  if (handler.status) {
    let status: number;
    try {
      status = renderStatus(handler.status, c, "reverse_proxy");
    } catch (e) {
      throw new RoutesFailed(toHandlerError(e));
    }
    return answer.finalize(status === 0 ? undefined : status);
  }
  const handling: UpstreamResponseHandling & { finalized: boolean } = {
    headers: answer.headers,
    finalized: false,
    finalize(status) {
      handling.finalized = true;
      return answer.finalize(status);
    },
  };
  if (c.proxy) c.proxy.handling = handling;
  let res: Response;
  try {
    res = await handler.routes!.for(next)(c);
  } catch (e) {
    throw new RoutesFailed(toHandlerError(e));
  } finally {
    if (c.proxy) c.proxy.handling = undefined;
    if (!handling.finalized && answer.body instanceof ReadableStream) {
      answer.body.cancel().catch(() => {});
    }
  }
  return res;
}

function handlingOf(c: RequestContext, name: string): UpstreamResponseHandling {
  const h = c.proxy?.handling;
  if (!h) {
    throw new HandlerError(
      500,
      `cannot use '${name}' outside of reverse_proxy's handle_response routes`,
      name,
    );
  }
  return h;
}

/** `http.handlers.copy_response`. */
export const copyResponseModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.copy_response",
  create(config) {
    const where = "http.handlers.copy_response";
    checkFields(config, ["handler", "status_code"], where);
    const sc = config.status_code;
    if (sc !== undefined && sc !== null && typeof sc !== "number" && typeof sc !== "string") {
      throw new ConfigError(
        "invalid_config",
        `${where}.status_code: must be a number or string`,
      );
    }
    const status = sc === undefined || sc === null || sc === ""
      ? null
      : compileTemplate(String(sc));
    return {
      serveHTTP(c) {
        const h = handlingOf(c, "copy_response");
        return h.finalize(status ? renderStatus(status, c, "copy_response") : undefined);
      },
    };
  },
};

/** `http.handlers.copy_response_headers`. */
export const copyResponseHeadersModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.copy_response_headers",
  create(config) {
    const where = "http.handlers.copy_response_headers";
    checkFields(config, ["handler", "include", "exclude"], where);
    const include = new Set(
      (optStrings(config, "include", where) ?? []).map((s) => s.toLowerCase()),
    );
    const exclude = new Set(
      (optStrings(config, "exclude", where) ?? []).map((s) => s.toLowerCase()),
    );
    if (include.size && exclude.size) {
      throw new ConfigError(
        "invalid_config",
        `${where}: cannot define both 'exclude' and 'include' lists at the same time`,
      );
    }
    return {
      serveHTTP(c, next) {
        const h = handlingOf(c, "copy_response_headers");
        const out = c.responseHeaders();
        for (const [k, v] of h.headers) {
          if (include.size && !include.has(k)) continue;
          if (exclude.has(k)) continue;
          out.append(k, v);
        }
        return next(c);
      },
    };
  },
};
