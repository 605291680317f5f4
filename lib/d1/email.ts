/**
 * E-mail delivery for the flows: the site injects an {@link EmailSender}; the flows render a
 * template (built-in or the site's `render*` override) and hand the message to it.
 *
 * @module
 */
import { FlowStop } from "./errors.ts";

/** A message passed to the site's sender. */
export interface EmailMessage {
  /** Recipient address. */
  to: string;
  /** Subject line (one line, no control characters). */
  subject: string;
  /** HTML body. */
  html: string;
  /** Plain-text body. */
  text: string;
}

/** What a template returns. */
export interface RenderedEmail {
  /** Subject line. */
  subject: string;
  /** HTML body. */
  html: string;
  /** Plain-text body. */
  text: string;
}

/** The site's e-mail sender: delivers one message through the provider it chooses. */
export type EmailSender = (message: EmailMessage) => Promise<unknown> | unknown;

/** Renders a template for `vars` (sync or async). */
export type Renderer<V> = (vars: V) => RenderedEmail | Promise<RenderedEmail>;

/** An e-mail that a flow sent after answering and that did not go out (see `onSendError`). */
export interface SendFailure {
  /** The flow that sent it: `signup`, `resendOtp`, `requestPasswordReset`, `requestEmailChange`. */
  flow: string;
  /**
   * `send_failed`: the site's sender threw or rejected; `internal_error`: a `render*` override
   * threw or returned no `{subject, html, text}`, or `waitUntil` threw.
   */
  error: "send_failed" | "internal_error";
  /** What the sender, the renderer or `waitUntil` threw. */
  cause: unknown;
}

/**
 * What the flows that e-mail only for some addresses (`signup`, `resendOtp`,
 * `requestPasswordReset`, `requestEmailChange`) take besides the sender: they answer without
 * waiting for the e-mail, so that the answer's time does not depend on the sender, and so
 * does not tell whether the address has an account; the e-mail goes on after the answer.
 */
export interface DeliveryOptions {
  /**
   * Receives each delivery when the flow has started it, to keep the runtime alive until it is
   * done: `ctx.waitUntil.bind(ctx)` on Cloudflare Workers (without it, the isolate may stop
   * before the mail is sent). The promise never rejects. Default: none (Deno, Node and Bun
   * finish it anyway).
   */
  waitUntil?: (delivery: Promise<unknown>) => void;
  /**
   * Told of each e-mail that did not go out. Default: one line on `console.error` with the
   * flow and the error code (never the address, the message or the cause). An exception it
   * throws is ignored.
   */
  onSendError?: (failure: SendFailure) => void;
}

/** The parsed {@linkcode DeliveryOptions} of a flow. @internal */
export interface Handoff {
  waitUntil?: (delivery: Promise<unknown>) => void;
  onSendError?: (failure: SendFailure) => void;
}

function report(handoff: Handoff, failure: SendFailure): void {
  try {
    if (handoff.onSendError) handoff.onSendError(failure);
    else {console.error(
        `gatehouse/d1: ${failure.flow} could not send its e-mail (${failure.error})`,
      );}
  } catch {
    // a reporter that throws changes nothing
  }
}

/**
 * Lets `delivery` go on after the flow answers: handed to `waitUntil` when given; a failure
 * runs `undo` (e.g. lifting the send throttle), then is reported to `onSendError`. Never
 * throws, and the delivery never becomes an unhandled rejection. @internal
 */
export function sendAfter(
  handoff: Handoff,
  flow: string,
  delivery: Promise<void>,
  undo?: () => Promise<unknown>,
): void {
  const settled = delivery.catch(async (e: unknown) => {
    if (undo) await undo().catch(() => {});
    const stop = e instanceof FlowStop ? e : null;
    report(handoff, {
      flow,
      error: stop?.error === "send_failed" ? "send_failed" : "internal_error",
      cause: stop ? stop.cause : e,
    });
  });
  try {
    handoff.waitUntil?.(settled);
  } catch (e) {
    report(handoff, { flow, error: "internal_error", cause: e });
  }
}

/**
 * Renders with the override when given (else the built-in) and sends. A renderer that throws
 * or returns a malformed message is an `internal_error`; a sender that throws is `send_failed`.
 * @internal
 */
export async function deliver<V>(
  send: EmailSender,
  to: string,
  builtIn: Renderer<V>,
  override: unknown,
  vars: V,
): Promise<void> {
  const render = typeof override === "function" ? override as Renderer<V> : builtIn;
  let mail: RenderedEmail;
  try {
    mail = await render(vars);
  } catch (e) {
    throw Object.assign(new FlowStop("internal_error"), { cause: e });
  }
  if (
    !mail || typeof mail.subject !== "string" || typeof mail.html !== "string" ||
    typeof mail.text !== "string"
  ) {
    throw new FlowStop("internal_error");
  }
  // A subject is a header: never let a line break through.
  // deno-lint-ignore no-control-regex
  const subject = mail.subject.replace(/[\u0000-\u001f\u007f]+/g, " ");
  try {
    await send({ to, subject, html: mail.html, text: mail.text });
  } catch (e) {
    throw Object.assign(new FlowStop("send_failed"), { cause: e });
  }
}
