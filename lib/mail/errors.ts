/**
 * Error codes of the mail-scanning API: the body `code` of every error answer, its HTTP status
 * and its message. The first thirteen pairs are the peer service's (PostScan Mail); the codes
 * above 9400 are this server's own additions for what the peer does not have (file links,
 * unknown endpoints, and the mailroom's records: 9410 for an account, user, API key, webhook
 * or delivery that does not exist, HTTP 404 like the customer API's unknown address and item;
 * 9422 for a webhook URL whose target is internal, HTTP 422).
 *
 * @module
 */

/** Every error `code` this server answers with, as found in the body `{"code":N,"message":"..."}`. */
export type MailErrorCode =
  | 429
  | 431
  | 430
  | 433
  | 432
  | 19
  | 434
  | 18
  | 89
  | 9400
  | 14
  | 471
  | 469
  | 9403
  | 9404
  | 9410
  | 9422;

/** One row of the error table. */
export interface MailErrorInfo {
  /** HTTP status sent with the code. */
  readonly status: number;
  /** Stable message sent with the code. */
  readonly message: string;
}

/**
 * The error table: body code → HTTP status and message.
 *
 * @example
 * ```ts
 * import { mailErrors } from "./errors.ts";
 * console.log(mailErrors[471].status); // 403
 * ```
 */
export const mailErrors: Readonly<Record<MailErrorCode, MailErrorInfo>> = {
  429: { status: 401, message: "Key is not correct, please use the right key and try again." },
  431: { status: 401, message: "Key is revoked, please use the right key and try again." },
  430: { status: 403, message: "Account is closed, please contact support for further help." },
  433: { status: 403, message: "You don't have access to the API specified." },
  432: {
    status: 405,
    message: "Specified method is incorrect, please recheck and try again later.",
  },
  19: { status: 422, message: "Invalid inputs." },
  434: { status: 429, message: "Too many requests have been sent." },
  18: { status: 500, message: "Database error" },
  89: { status: 404, message: "Address not found" },
  9400: { status: 401, message: "Address is not registered to account" },
  14: { status: 404, message: "Item not found" },
  471: { status: 403, message: "Item status does not allow this operation." },
  469: { status: 403, message: "Items don't belong to the specified address." },
  9403: { status: 403, message: "The file link is invalid or has expired." },
  9404: { status: 404, message: "No such endpoint." },
  9410: { status: 404, message: "Record not found." },
  9422: { status: 422, message: "The webhook URL targets an internal address." },
};

/**
 * An error the server turns into its `{"code":N,"message":"..."}` answer. Thrown by the store
 * and the routers; `detail` (when given) replaces the table message, e.g. to name the field of
 * an invalid input. Never carries secrets.
 *
 * @example
 * ```ts
 * import { MailServerError } from "./errors.ts";
 * const err = new MailServerError(19, "mail_ids must be a non-empty array of strings");
 * console.log(err.status); // 422
 * ```
 */
export class MailServerError extends Error {
  /** Body code. */
  readonly code: MailErrorCode;
  /** HTTP status. */
  readonly status: number;
  /** Extra headers for the answer (e.g. `Retry-After`). */
  readonly headers: Record<string, string>;

  /**
   * Creates the error for `code`, optionally with a more precise message, headers, and an HTTP
   * status other than the table's (413 for an oversized body answered with code 19).
   */
  constructor(
    code: MailErrorCode,
    detail?: string,
    headers: Record<string, string> = {},
    status?: number,
  ) {
    super(detail ?? mailErrors[code].message);
    this.name = "MailServerError";
    this.code = code;
    this.status = status ?? mailErrors[code].status;
    this.headers = headers;
  }

  /** The answer body. */
  toJSON(): { code: MailErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}
