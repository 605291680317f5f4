/**
 * Typed errors of the config engine and the admin API.
 *
 * @module
 */

/**
 * Stable codes of {@linkcode AdminError}:
 * - `bad_request`: malformed body, path, header or config (400)
 * - `forbidden`: Host or Origin refused (403)
 * - `not_found`: missing path, key, index or `@id` (404)
 * - `method_not_allowed`: wrong method for the endpoint (405)
 * - `conflict`: strict create on an existing key (409)
 * - `precondition_failed`: stale `If-Match` (412)
 * - `too_large`: body over the limit (413)
 * - `uri_too_long`: request target over the limit (414)
 * - `load_failed`: the new config failed to provision, validate or start (400)
 * - `internal`: anything else (500)
 */
export type AdminErrorCode =
  | "bad_request"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "precondition_failed"
  | "too_large"
  | "uri_too_long"
  | "load_failed"
  | "internal";

const STATUS: Record<AdminErrorCode, number> = {
  bad_request: 400,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  precondition_failed: 412,
  too_large: 413,
  uri_too_long: 414,
  load_failed: 400,
  internal: 500,
};

/**
 * An error with an HTTP status; the admin API answers it as `{"error": message}`.
 *
 * @example
 * ```ts
 * import { AdminError } from "./errors.ts";
 * throw new AdminError("not_found", "unknown object ID 'x'");
 * ```
 */
export class AdminError extends Error {
  /** Stable code. */
  readonly code: AdminErrorCode;
  /** HTTP status the admin API answers with. */
  readonly status: number;
  /** Creates an error with a code and a message safe to show to the client. */
  constructor(code: AdminErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "AdminError";
    this.code = code;
    this.status = STATUS[code];
  }
}

/**
 * Wraps any thrown value as an AdminError. A stack overflow is the input's doing (a value
 * nested deeper than the code walking it can follow) and becomes `bad_request`; other unknown
 * errors become `internal`.
 *
 * @example
 * ```ts
 * import { toAdminError } from "./errors.ts";
 * toAdminError(new RangeError("Maximum call stack size exceeded")).status; // 400
 * ```
 */
export function toAdminError(e: unknown): AdminError {
  if (e instanceof AdminError) return e;
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return new AdminError("bad_request", "input is nested too deeply", { cause: e });
  }
  return new AdminError("internal", e instanceof Error ? e.message : String(e), { cause: e });
}

/**
 * The message of a `JSON.parse` error without the excerpt of the input V8 quotes in it (the
 * input may hold secrets, and errors are logged).
 *
 * @example
 * ```ts
 * import { jsonErrorMessage } from "./errors.ts";
 * try {
 *   JSON.parse("secret");
 * } catch (e) {
 *   jsonErrorMessage(e); // "Unexpected token 's' (not valid JSON)"
 * }
 * ```
 */
export function jsonErrorMessage(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.replace(/, "(?:[^"\\]|\\.)*"(?:\.\.\.)? is not valid JSON$/s, " (not valid JSON)")
    .replace(/^Unexpected token '(.)', .*$/s, "Unexpected token '$1' (not valid JSON)")
    .slice(0, 200);
}
