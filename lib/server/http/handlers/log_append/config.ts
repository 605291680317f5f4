/**
 * The config of `http.handlers.log_append`, field by field as Caddy's `LogAppend`
 * (`modules/logging/appendhandler.go`), and its decoder. The JSON decoder, the `log_append`
 * directive (`caddyfile.ts`) and the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import { Decoder, type Raw } from "../../../config/decode.ts";

/** `http.handlers.log_append`: adds a field to the request's access log entry. */
export type LogAppendConfig = {
  /** The module name. */
  handler: "log_append";
  /** The name of the log field; required (a config without one is refused). */
  key?: string;
  /**
   * The field's value: a placeholder (in braces, read when the entry is written), else the
   * name of a request variable (its value), else this text as it is.
   */
  value?: string;
  /** Add the field before the rest of the chain runs, instead of after it. */
  early?: boolean;
};

/** The fields of {@linkcode LogAppendConfig}. */
export const LOG_APPEND_FIELDS: readonly (keyof LogAppendConfig)[] = [
  "handler",
  "key",
  "value",
  "early",
];

/**
 * Decodes and checks a `log_append` config (a key is required).
 *
 * @example
 * ```ts
 * import { decodeLogAppend } from "./config.ts";
 * decodeLogAppend({ handler: "log_append", key: "user", value: "{http.auth.user.id}" }).key; // "user"
 * ```
 */
export function decodeLogAppend(raw: Raw): LogAppendConfig {
  const d = new Decoder(raw, "http.handlers.log_append").fields(LOG_APPEND_FIELDS);
  const key = d.string("key") ?? "";
  if (key === "") d.fail('"key" is required');
  const out: LogAppendConfig = { handler: "log_append", key };
  const value = d.string("value");
  if (value !== undefined) out.value = value;
  const early = d.bool("early");
  if (early !== undefined) out.early = early;
  return out;
}
