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
  } catch {
    throw new FlowStop("internal_error");
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
  } catch {
    throw new FlowStop("send_failed");
  }
}
