/**
 * The one error a template raises, parsing or executing: Go's messages
 * (`template: <name>:<line>: <what>`, `template: <name>:<line>:<col>: executing "<name>" at
 * <<node>>: <what>`), and the handler error a template function wants answered (`httpError`).
 *
 * @module
 */

/** A template that does not parse or fails while executing. */
export class TemplateError extends Error {
  /** Always `TemplateError`. */
  override readonly name = "TemplateError";
  /** `parse` or `exec`. */
  readonly phase: "parse" | "exec";
  /** What a template function threw as its Go error, when that made the failure. */
  override readonly cause: unknown;
  constructor(message: string, phase: "parse" | "exec", cause?: unknown) {
    super(message);
    this.phase = phase;
    this.cause = cause;
  }
}
