/**
 * The one error of config decoding: every module (http, tls, logging, storage, pki, the admin
 * section, listeners) throws a {@linkcode ConfigError} with a stable code and the path of the
 * value it refused, so that a load fails the same way whichever part refused it.
 *
 * @module
 */

/**
 * Stable codes of {@linkcode ConfigError}:
 * - `invalid_config`: a value of the wrong type, out of range, or not allowed here
 * - `unknown_field`: a field the decoder does not know (decoding is strict, as Caddy's)
 * - `invalid_address`: a network address that cannot be parsed
 * - `invalid_regexp`: a regular expression that does not compile
 * - `invalid_placeholder`: a placeholder that cannot be parsed
 * - `certificate_load`: a certificate or key that cannot be read or does not parse
 * - `no_certificate`: no certificate can serve what the config asks
 * - `unsupported`: a value Caddy accepts that this server does not implement
 * - `gatehousefile`: the text config (Gatehousefile, Caddyfile) does not parse or adapt; the
 *   path is `<file>:<line>`
 */
export type ConfigErrorCode =
  | "invalid_config"
  | "unknown_field"
  | "invalid_address"
  | "invalid_regexp"
  | "invalid_placeholder"
  | "certificate_load"
  | "no_certificate"
  | "unsupported"
  | "gatehousefile";

/**
 * A refused config value. `message` names where (`http.handlers.file_server.browse: ...`);
 * `path` is that location alone, when the thrower knew it.
 *
 * @example
 * ```ts
 * import { ConfigError } from "./error.ts";
 * const e = new ConfigError("unknown_field", 'tls: unknown field "x"', { path: "tls" });
 * e.code; // "unknown_field"
 * ```
 */
export class ConfigError extends Error {
  /** Stable code. */
  readonly code: ConfigErrorCode;
  /** Where the refused value is (a JSON path or a module id with its sub-path), or "". */
  readonly path: string;
  /** Creates a config error with a stable code and a message that names the place. */
  constructor(
    code: ConfigErrorCode,
    message: string,
    options?: { path?: string; cause?: unknown },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ConfigError";
    this.code = code;
    this.path = options?.path ?? "";
  }
}
