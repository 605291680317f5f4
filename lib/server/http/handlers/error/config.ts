/**
 * The config of `http.handlers.error`, field by field as Caddy's `StaticError`
 * (`modules/caddyhttp/staticerror.go`), and its decoder. The JSON decoder, the `error`
 * directive (`caddyfile.ts`) and the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";

/**
 * `http.handlers.error`: fails the request with an error instead of answering, so that the
 * server's `errors` routes handle it as if one had occurred.
 */
export type ErrorConfig = {
  /** The module name. */
  handler: "error";
  /** The error message (placeholders allowed); none by default. */
  error?: string;
  /** The status (a number, or a string with placeholders); 500 by default. */
  status_code?: string | number;
};

/** The fields of {@linkcode ErrorConfig}. */
export const ERROR_FIELDS: readonly (keyof ErrorConfig)[] = ["handler", "error", "status_code"];

/**
 * Decodes and checks an `error` config.
 *
 * @example
 * ```ts
 * import { decodeError } from "./config.ts";
 * decodeError({ handler: "error", status_code: 403 }).status_code; // 403
 * ```
 */
export function decodeError(raw: Raw): ErrorConfig {
  const d = new Decoder(raw, "http.handlers.error").fields(ERROR_FIELDS);
  const out: ErrorConfig = { handler: "error" };
  const error = d.string("error");
  if (error !== undefined) out.error = error;
  // any value is written as text (a status that is no number fails the request with 500)
  const status = d.value("status_code");
  if (status !== undefined && status !== null) out.status_code = status as string | number;
  return out;
}
