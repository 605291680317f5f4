/**
 * `reverse_proxy`'s `handle_response` at run time. The routes run on the original request and
 * continue into the proxy's own `next`; the upstream body is dropped unless copied (by the
 * handlers of `copy_response.ts`). Errors of the routes are never retried against another
 * upstream.
 *
 * @module
 */
import type { RequestContext, UpstreamResponseHandling } from "../../context.ts";
import { type HandlerError, toHandlerError } from "../../errors.ts";
import type { Next } from "../../handler.ts";
import { renderStatus, type ResponseHandler } from "../../response_handlers.ts";

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
