/**
 * The error of bad command-line input.
 *
 * @module
 */

/** Error for bad command-line input; printed without a stack trace, exit code 1. */
export class UsageError extends Error {
  /** Stable code for tests and callers. */
  readonly code = "usage";
}
