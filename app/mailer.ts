/**
 * A real `EmailSender` for an HTTP mail API: one JSON `POST` per message, in the shape of
 * Resend's `POST /emails` (`{from, to: [..], subject, html, text}` with
 * `Authorization: Bearer <key>`), which several providers and relays accept.
 *
 * Variables:
 * - `MAIL_FROM`: the sender address, e.g. `Gatehouse <no-reply@example.com>` (required).
 * - `MAIL_API_KEY`: the provider's API key (required; never logged).
 * - `MAIL_API_URL`: the endpoint; default `https://api.resend.com/emails`.
 *
 * The app uses it when `MAIL_API_KEY` is set; otherwise, in development, mail goes to the
 * outbox page instead.
 *
 * @module
 */
import type { EmailMessage, EmailSender } from "../d1.ts";
import type { AppEnv } from "./env.ts";

/** Default endpoint: Resend's send-email API. */
export const DEFAULT_MAIL_API_URL = "https://api.resend.com/emails";

/** Why sending failed. */
export type MailerErrorCode = "mail_not_configured" | "mail_rejected" | "mail_unreachable";

/** Error thrown by the HTTP sender; the message never contains the API key. */
export class MailerError extends Error {
  /** Stable code. */
  readonly code: MailerErrorCode;
  /** HTTP status of a rejection, when there was one. */
  readonly status?: number;
  constructor(code: MailerErrorCode, message: string, status?: number) {
    super(message);
    this.name = "MailerError";
    this.code = code;
    this.status = status;
  }
}

/** Settings of {@linkcode httpMailSender}. */
export interface HttpMailOptions {
  /** Sender address (`MAIL_FROM`). */
  from: string;
  /** API key (`MAIL_API_KEY`). */
  apiKey: string;
  /** Endpoint (`MAIL_API_URL`); default {@linkcode DEFAULT_MAIL_API_URL}. */
  url?: string;
  /** Timeout per request in milliseconds; default 10,000. */
  timeoutMs?: number;
}

/** An `EmailSender` posting each message to the mail API; throws {@linkcode MailerError}. */
export function httpMailSender(options: HttpMailOptions): EmailSender {
  if (!options.from || !options.apiKey) {
    throw new MailerError("mail_not_configured", "MAIL_FROM and MAIL_API_KEY are required");
  }
  const url = options.url ?? DEFAULT_MAIL_API_URL;
  return async (message: EmailMessage): Promise<{ id?: string }> => {
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify({
          from: options.from,
          to: [message.to],
          subject: message.subject,
          html: message.html,
          text: message.text,
        }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
    } catch {
      throw new MailerError("mail_unreachable", `mail API unreachable at ${new URL(url).host}`);
    }
    const body = await response.text();
    if (!response.ok) {
      throw new MailerError(
        "mail_rejected",
        `mail API answered ${response.status}`,
        response.status,
      );
    }
    try {
      const parsed = JSON.parse(body);
      return typeof parsed?.id === "string" ? { id: parsed.id } : {};
    } catch {
      return {};
    }
  };
}

/** The HTTP sender from the environment, or null when `MAIL_API_KEY` is not set. */
export function mailSenderFromEnv(env: AppEnv): EmailSender | null {
  const apiKey = env.vars.MAIL_API_KEY;
  if (!apiKey) return null;
  const from = env.vars.MAIL_FROM;
  if (!from) {
    throw new MailerError("mail_not_configured", "MAIL_FROM must be set with MAIL_API_KEY");
  }
  return httpMailSender({ from, apiKey, url: env.vars.MAIL_API_URL });
}
