/**
 * Handler errors: what a handler throws to make the server answer with an error status and
 * run the server's `errors` routes (Caddy's `caddyhttp.HandlerError`).
 *
 * @module
 */

const ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  let s = "";
  for (const b of bytes) s += ID_CHARS[b % ID_CHARS.length];
  return s;
}

/**
 * An error with an HTTP status a handler throws; the server turns it into the response status
 * or hands it to the `errors` routes as `{http.error.*}`. Deliberately not an `Error`
 * subclass: building an Error (stack capture) costs several microseconds in Deno, and 404s
 * are a hot path; thrown exceptions that are real Errors are wrapped by `toHandlerError`.
 *
 * @example
 * ```ts
 * import { HandlerError } from "./errors.ts";
 * throw new HandlerError(404, "file not found");
 * ```
 */
export class HandlerError {
  /** HTTP status code (0 means 500). */
  readonly status: number;
  /** What went wrong (`{http.error.message}`). */
  readonly message: string;
  /** Where it was thrown, e.g. `file_server` (`{http.error.trace}`). */
  readonly trace: string;
  /** The underlying error, when this wraps one. */
  readonly cause: unknown;
  /** Always `HandlerError`. */
  readonly name = "HandlerError";
  #id: string | null = null;
  /** Creates a handler error. */
  constructor(status: number, message: string, trace = "", cause?: unknown) {
    this.status = status || 500;
    this.message = message;
    this.trace = trace;
    this.cause = cause;
  }

  /** Short random id to correlate logs with responses (`{http.error.id}`), made on first use. */
  get id(): string {
    return this.#id ??= randomId();
  }

  /** `HandlerError: <status> <message>`. */
  toString(): string {
    return `HandlerError: ${this.status} ${this.message}`;
  }
}

const errorResponses = new WeakMap<Response, HandlerError>();

/**
 * Fails a request without throwing: returns a placeholder response that the server (or a
 * subroute with error routes) recognises and replaces by the error handling. Cheaper than a
 * throw on hot paths such as 404s; middleware passes it through like any response.
 *
 * @example
 * ```ts
 * import { errorResponse, HandlerError } from "./errors.ts";
 * const res = errorResponse(new HandlerError(404, "file not found"));
 * ```
 */
export function errorResponse(err: HandlerError): Response {
  const res = new Response(null, { status: err.status });
  errorResponses.set(res, err);
  return res;
}

/** The error a placeholder response from `errorResponse` stands for, if it is one. */
export function responseError(res: Response): HandlerError | undefined {
  return errorResponses.get(res);
}

/**
 * Runs `fn` with stack trace capture off: errors that are expected on hot paths (a missing
 * file, a 404) then cost a fraction of a normal Error.
 *
 * @example
 * ```ts
 * import { HandlerError, withoutStacks } from "./errors.ts";
 * const e = withoutStacks(() => new HandlerError(404, "not found"));
 * ```
 */
export function withoutStacks<T>(fn: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return fn();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** Wraps any thrown value as a HandlerError (500 unless it already is one). */
export function toHandlerError(e: unknown): HandlerError {
  if (e instanceof HandlerError) return e;
  return new HandlerError(500, e instanceof Error ? e.message : String(e), "", e);
}
