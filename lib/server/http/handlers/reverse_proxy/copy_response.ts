/**
 * The two handlers meant for `reverse_proxy`'s `handle_response` routes (Caddy's
 * `modules/caddyhttp/reverseproxy/copyresponse.go`): `copy_response` sends the upstream
 * response on, optionally with another `status_code`; `copy_response_headers` copies the
 * upstream's header fields, `include` or `exclude` some, into the response being built, then
 * continues. Their configs, decoders and modules.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import type { ModuleDefinition } from "../../../module/mod.ts";
import type { RequestContext, UpstreamResponseHandling } from "../../context.ts";
import { HandlerError } from "../../errors.ts";
import type { HttpHandler } from "../../handler.ts";
import { compileTemplate } from "../../replacer.ts";
import { renderStatus } from "../../response_handlers.ts";

/** `http.handlers.copy_response`. */
export type CopyResponseConfig = {
  /** The module name. */
  handler: "copy_response";
  /** The status sent (a number or a placeholder); the upstream's when absent. */
  status_code?: number | string;
};

/** `http.handlers.copy_response_headers`. */
export type CopyResponseHeadersConfig = {
  /** The module name. */
  handler: "copy_response_headers";
  /** Only these fields are copied. */
  include?: string[];
  /** These fields are not copied (not with `include`). */
  exclude?: string[];
};

/**
 * Decodes and checks a `copy_response` config.
 *
 * @example
 * ```ts
 * import { decodeCopyResponse } from "./copy_response.ts";
 * decodeCopyResponse({ handler: "copy_response", status_code: 202 }).status_code; // 202
 * ```
 */
export function decodeCopyResponse(raw: Raw): CopyResponseConfig {
  const d = new Decoder(raw, "http.handlers.copy_response").fields(["handler", "status_code"]);
  const out: CopyResponseConfig = { handler: "copy_response" };
  const sc = d.value("status_code");
  if (sc !== undefined && sc !== null) {
    if (typeof sc !== "number" && typeof sc !== "string") {
      d.failAt("status_code", "must be a number or string");
    }
    out.status_code = sc as number | string;
  }
  return out;
}

/**
 * Decodes and checks a `copy_response_headers` config.
 *
 * @example
 * ```ts
 * import { decodeCopyResponseHeaders } from "./copy_response.ts";
 * decodeCopyResponseHeaders({ handler: "copy_response_headers", include: ["Etag"] }).include;
 * // ["Etag"]
 * ```
 */
export function decodeCopyResponseHeaders(raw: Raw): CopyResponseHeadersConfig {
  const d = new Decoder(raw, "http.handlers.copy_response_headers")
    .fields(["handler", "include", "exclude"]);
  const out: CopyResponseHeadersConfig = { handler: "copy_response_headers" };
  const include = d.strings("include");
  const exclude = d.strings("exclude");
  if (include?.length && exclude?.length) {
    d.fail("cannot define both 'exclude' and 'include' lists at the same time");
  }
  if (include) out.include = include;
  if (exclude) out.exclude = exclude;
  return out;
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

/** A `copy_response` handler of a decoded config. */
export function copyResponse(config: CopyResponseConfig): HttpHandler {
  const sc = config.status_code;
  const status = sc === undefined || sc === "" ? null : compileTemplate(String(sc));
  return {
    serveHTTP(c) {
      const h = handlingOf(c, "copy_response");
      return h.finalize(status ? renderStatus(status, c, "copy_response") : undefined);
    },
  };
}

/** A `copy_response_headers` handler of a decoded config. */
export function copyResponseHeaders(config: CopyResponseHeadersConfig): HttpHandler {
  const include = new Set((config.include ?? []).map((s) => s.toLowerCase()));
  const exclude = new Set((config.exclude ?? []).map((s) => s.toLowerCase()));
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
}

/** `http.handlers.copy_response`. */
export const copyResponseModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.copy_response",
  create: (config) => copyResponse(decodeCopyResponse(config)),
};

/** `http.handlers.copy_response_headers`. */
export const copyResponseHeadersModule: ModuleDefinition<HttpHandler> = {
  id: "http.handlers.copy_response_headers",
  create: (config) => copyResponseHeaders(decodeCopyResponseHeaders(config)),
};
