/**
 * `log_append` (Caddy's `http.handlers.log_append`): adds the field `key` to the request's
 * access log record. `value` is a single placeholder (its value, typed for `{http.vars.*}`),
 * the name of a request variable, or else a literal. `{http.request.body}` /
 * `{http.request.body_base64}` read the whole request body (and hand the same bytes on),
 * `{http.response.body}` / `{http.response.body_base64}` keep a copy of the whole response
 * body: both hold the body in memory. `early` adds the field before the rest of the chain
 * runs (so it is logged even when a later handler fails). The config is
 * {@linkcode LogAppendConfig} (`config.ts`); the Gatehousefile syntax is `caddyfile.ts` and the
 * writer `writer.ts`.
 *
 * @module
 */
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { RequestContext } from "../../context.ts";
import { responseError } from "../../errors.ts";
import type { HttpHandler } from "../../handler.ts";
import { encodeBase64, getterFor } from "../../replacer.ts";
import { decodeLogAppend, type LogAppendConfig } from "./config.ts";

const REQUEST_BODY = "{http.request.body}";
const REQUEST_BODY_B64 = "{http.request.body_base64}";
const RESPONSE_BODY = "{http.response.body}";
const RESPONSE_BODY_B64 = "{http.response.body_base64}";

async function readAll(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array> {
  if (stream === null) return new Uint8Array(0);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Builds a log_append handler from its decoded config. */
export function logAppend(config: LogAppendConfig): HttpHandler {
  const key = config.key ?? "";
  const value = config.value ?? "";
  const early = config.early ?? false;
  const requestBody = value === REQUEST_BODY || value === REQUEST_BODY_B64;
  const responseBody = value === RESPONSE_BODY || value === RESPONSE_BODY_B64;

  const single = value.startsWith("{") && value.endsWith("}") &&
    value.indexOf("{", 1) < 0;
  const placeholder = single ? value.slice(1, -1) : null;
  const getter = placeholder !== null && !placeholder.startsWith("http.vars.") &&
      !requestBody && !responseBody
    ? getterFor(placeholder)
    : null;

  const add = (c: RequestContext, v: unknown) => (c.logFields ??= []).push([key, v]);
  const valueOf = (c: RequestContext): unknown => {
    if (placeholder !== null) {
      if (placeholder.startsWith("http.vars.")) {
        return c.getVar(placeholder.slice("http.vars.".length)) ?? null;
      }
      return getter!(c) ?? null;
    }
    const v = c.getVar(value);
    return v !== undefined ? v : value;
  };

  return {
    async serveHTTP(c, next) {
      if (requestBody) {
        const bytes = await readAll(c.requestBody());
        c.setRequestBody(new Response(bytes as BodyInit).body);
        add(c, value === REQUEST_BODY ? new TextDecoder().decode(bytes) : encodeBase64(bytes));
        return await next(c);
      }
      if (responseBody) {
        const res = await next(c);
        if (responseError(res)) return res;
        const bytes = await readAll(res.body);
        add(c, value === RESPONSE_BODY ? new TextDecoder().decode(bytes) : encodeBase64(bytes));
        return new Response(res.body === null ? null : bytes as BodyInit, {
          status: res.status,
          statusText: res.statusText,
          headers: res.headers,
        });
      }
      if (early) {
        add(c, valueOf(c));
        return await next(c);
      }
      try {
        return await next(c);
      } finally {
        add(c, valueOf(c));
      }
    },
  };
}

/** Registry entry. */
export const logAppendModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.log_append",
  create: (config) => logAppend(decodeLogAppend(config)),
};
