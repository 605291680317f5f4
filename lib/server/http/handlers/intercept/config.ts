/**
 * The config of `http.handlers.intercept`, as Caddy's `Intercept`
 * (`modules/caddyhttp/intercept/intercept.go`), and its decoder. The JSON decoder, the
 * `intercept` directive (`caddyfile.ts`) and the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";
import type { ResponseHandlerConfig } from "../../response_handlers.ts";

/** `http.handlers.intercept`: acts on the response the rest of the chain makes. */
export type InterceptConfig = {
  /** The module name. */
  handler: "intercept";
  /**
   * The handlers, each with its response matcher; the first that matches the response
   * handles it (`{http.intercept.status_code}` and `{http.intercept.header.*}` hold the
   * original response's status and fields). Decoded when provisioned, with their routes.
   */
  handle_response?: ResponseHandlerConfig[];
};

/** The fields of {@linkcode InterceptConfig}. */
export const INTERCEPT_FIELDS: readonly (keyof InterceptConfig)[] = ["handler", "handle_response"];

/**
 * Decodes an `intercept` config (known fields; the response handlers are decoded with their
 * routes when the handler is provisioned).
 *
 * @example
 * ```ts
 * import { decodeIntercept } from "./config.ts";
 * decodeIntercept({ handler: "intercept", handle_response: [{ status_code: 200 }] });
 * ```
 */
export function decodeIntercept(raw: Raw): InterceptConfig {
  const d = new Decoder(raw, "http.handlers.intercept").fields(INTERCEPT_FIELDS);
  const out: InterceptConfig = { handler: "intercept" };
  const handlers = d.value("handle_response");
  if (handlers !== undefined) out.handle_response = handlers as ResponseHandlerConfig[];
  return out;
}
