/**
 * The config of `http.handlers.request_body`, as Caddy 2.6's `RequestBody`
 * (`modules/caddyhttp/requestbody/requestbody.go`), and its decoder. The JSON decoder, the
 * `request_body` directive (`caddyfile.ts`) and the writer (`writer.ts`) make or read this
 * type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";

/** `http.handlers.request_body`: limits the request body. */
export type RequestBodyConfig = {
  /** The module name. */
  handler: "request_body";
  /**
   * The most bytes a later handler may read from the body; reading more fails with 413 (and
   * a declared `Content-Length` over it fails at once). 0 or less: no limit.
   */
  max_size?: number;
};

/**
 * What the `request_body` directive writes: the config, and the `set` of later Caddy versions
 * (replace the body), which this handler refuses as an unknown field.
 */
export type RequestBodyDirective = RequestBodyConfig & {
  /** A body to replace the request's with (not available: refused). */
  set?: string;
};

/** The fields of {@linkcode RequestBodyConfig}. */
export const REQUEST_BODY_FIELDS: readonly (keyof RequestBodyConfig)[] = ["handler", "max_size"];

/**
 * Decodes and checks a `request_body` config.
 *
 * @example
 * ```ts
 * import { decodeRequestBody } from "./config.ts";
 * decodeRequestBody({ handler: "request_body", max_size: 1024 }).max_size; // 1024
 * ```
 */
export function decodeRequestBody(raw: Raw): RequestBodyConfig {
  const d = new Decoder(raw, "http.handlers.request_body").fields(REQUEST_BODY_FIELDS);
  const out: RequestBodyConfig = { handler: "request_body" };
  const max = d.number("max_size");
  if (max !== undefined) out.max_size = max;
  return out;
}
