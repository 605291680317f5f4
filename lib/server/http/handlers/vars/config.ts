/**
 * The config of `http.handlers.vars`, as Caddy's `VarsMiddleware`
 * (`modules/caddyhttp/vars.go`): a map of variable name to value, and its decoder. The JSON
 * decoder, the `vars`, `root`, `fs`, `log_skip` and `log_name` directives (`caddyfile.ts`) and
 * the writer (`writer.ts`) make or read this type.
 *
 * @module
 */
import type { Raw } from "../../../config/decode.ts";

/**
 * `http.handlers.vars`: every field but `handler` is a variable (`{http.vars.<name>}`, the
 * `vars` and `vars_regexp` matchers) set to its value; string values may hold placeholders.
 * Variables other handlers read: `root` (the site root), `fs` (the file system),
 * `log_skip` (true: no access log), `access_logger_names` (the loggers to use).
 */
export type VarsConfig = {
  /** The module name. */
  handler: "vars";
  /** A variable and its value (values are not checked: any JSON value is one). */
  [name: string]: unknown;
};

/**
 * Decodes a `vars` config: any key is a variable, so there is nothing to refuse.
 *
 * @example
 * ```ts
 * import { decodeVars } from "./config.ts";
 * decodeVars({ handler: "vars", root: "/srv" }).root; // "/srv"
 * ```
 */
export function decodeVars(raw: Raw): VarsConfig {
  return { ...raw, handler: "vars" };
}
