/**
 * The config of `http.handlers.static_response`, field by field as Caddy's
 * `StaticResponse` (`modules/caddyhttp/staticresp.go`), and its decoder. The JSON decoder, the
 * `respond`/`redir`/`abort` directives (`caddyfile.ts`) and the writer (`writer.ts`) make or
 * read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import { compileTemplate } from "../../replacer.ts";

/** `http.handlers.static_response`. */
export type StaticResponseConfig = {
  /** The module name. */
  handler: "static_response";
  /** The status (a number or a placeholder); 200, or the error's status in error routes. */
  status_code?: string | number;
  /** Header fields of the answer (values may hold placeholders). */
  headers?: Record<string, string[]>;
  /** The body (placeholders allowed; unknown ones are kept as written). */
  body?: string;
  /** Close the connection after answering. */
  close?: boolean;
  /** Drop the answer: the connection is closed without a response. */
  abort?: boolean;
};

/** The fields of {@linkcode StaticResponseConfig}. */
export const STATIC_RESPONSE_FIELDS: readonly (keyof StaticResponseConfig)[] = [
  "handler",
  "status_code",
  "headers",
  "body",
  "close",
  "abort",
];

/**
 * Decodes and checks a `static_response` config (types, known fields, a constant status that
 * is three digits).
 *
 * @example
 * ```ts
 * import { decodeStaticResponse } from "./config.ts";
 * decodeStaticResponse({ handler: "static_response", body: "hello" }).body; // "hello"
 * ```
 */
export function decodeStaticResponse(raw: Raw): StaticResponseConfig {
  const d = new Decoder(raw, "http.handlers.static_response").fields(STATIC_RESPONSE_FIELDS);
  const out: StaticResponseConfig = { handler: "static_response" };
  const status = d.value("status_code");
  if (typeof status === "number" || typeof status === "string") {
    const t = status === "" ? null : compileTemplate(String(status));
    if (t?.constant != null && !/^\d{3}$/.test(t.constant)) {
      d.fail(`invalid status_code ${status}`);
    }
    out.status_code = status;
  } else if (status !== undefined) d.fail("status_code must be a number or string");
  const headers = d.headerMap("headers");
  if (headers) out.headers = headers;
  const body = d.string("body");
  if (body !== undefined) out.body = body;
  const close = d.bool("close");
  if (close !== undefined) out.close = close;
  const abort = d.bool("abort");
  if (abort !== undefined) out.abort = abort;
  return out;
}
