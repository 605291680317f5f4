/**
 * `intercept` (Caddy's `http.handlers.intercept`): lets the rest of the chain answer, then
 * hands the response to the first `handle_response` handler whose matcher accepts it
 * (status codes, header fields). A handler with only `status_code` replaces the status and
 * keeps the body; one with `routes` runs them, with `{http.intercept.status_code}` and
 * `{http.intercept.header.*}` (`{resp.*}` in a Gatehousefile) set to the original response's.
 * Its matchers and placeholders see the fields set before the answer (`header`) too. What the routes answer goes out
 * over the original header fields; when they answer nothing, the original response does;
 * when they answer without a body, the original body is kept. A chain that fails (an error
 * status for the `errors` routes) is not intercepted. The intercepted body is held in memory.
 * The config is {@linkcode InterceptConfig} (`config.ts`); the Gatehousefile syntax is
 * `caddyfile.ts` and the writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition, ProvisionContext } from "../../../module/mod.ts";
import { responseError } from "../../errors.ts";
import type { HttpHandler, Next } from "../../handler.ts";
import {
  provisionResponseHandlers,
  renderStatus,
  selectResponseHandler,
} from "../../response_handlers.ts";
import { decodeIntercept, type InterceptConfig } from "./config.ts";

/** Responses of the routes' own end: the routes wrote nothing. */
const untouched = new WeakSet<Response>();
const tail: Next = () => {
  const r = new Response(null);
  untouched.add(r);
  return r;
};

/**
 * A response's fields with those set before it existed added (`RequestContext.respHeaders`,
 * merged as the server merges them: the response's own win, `Set-Cookie` adds up).
 */
function answerFields(own: Headers, before: Headers | null): Headers {
  if (before === null) return own;
  const out = new Headers(own);
  for (const [k, v] of before) {
    if (k === "set-cookie") out.append(k, v);
    else if (!own.has(k)) out.set(k, v);
  }
  return out;
}

/** Provisions an intercept handler from its decoded config (its response handlers' routes). */
export async function intercept(
  config: InterceptConfig,
  ctx: ProvisionContext,
): Promise<HttpHandler> {
  const where = "http.handlers.intercept";
  const handlers = await provisionResponseHandlers(config.handle_response, ctx, where);
  return {
    async serveHTTP(c, next) {
      const res = await next(c);
      if (handlers.length === 0 || responseError(res)) return res;
      // the fields the answer goes out with: its own and those set before it (`header`), as
      // Caddy's response writer holds them all when its intercept looks
      const fields = answerFields(res.headers, c.respHeaders);
      const chosen = selectResponseHandler(handlers, res.status, fields);
      if (!chosen) return res;
      const body = res.body === null ? null : new Uint8Array(await res.arrayBuffer());
      const headers = new Headers(res.headers);
      c.setPlaceholder("http.intercept.status_code", String(res.status));
      for (const [k, v] of fields) c.setPlaceholder(`http.intercept.header.${k}`, v);
      if (!chosen.routes) {
        const status = chosen.status ? renderStatus(chosen.status, c, "intercept") : res.status;
        return new Response(body as BodyInit | null, { status, headers });
      }
      const out = await chosen.routes.for(tail)(c);
      if (responseError(out)) return out;
      if (untouched.has(out)) {
        return new Response(body as BodyInit | null, { status: res.status, headers });
      }
      // the routes' answer goes out over the original header fields
      headers.delete("content-length");
      for (const [k, v] of out.headers) {
        if (k === "set-cookie") headers.append(k, v);
        else headers.set(k, v);
      }
      const outBody = out.body === null && body !== null && body.length > 0 ? body : out.body;
      return new Response(outBody as BodyInit | null, { status: out.status, headers });
    },
  };
}

/** Registry entry. */
export const interceptModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.intercept",
  create: (config, ctx) => intercept(decodeIntercept(config), ctx),
};
