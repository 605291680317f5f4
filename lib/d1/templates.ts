/**
 * Built-in e-mail templates. Each returns `{subject, html, text}`, takes an optional
 * `appName`, and escapes every interpolated value (HTML-escaped in `html`; control characters
 * removed in `subject` and `text`; links only for `http:`/`https:` URLs).
 *
 * @module
 */
import type { RenderedEmail } from "./email.ts";

/** Default `appName` when a site gives none. */
export const DEFAULT_APP_NAME = "Gatehouse";

/** Escapes a value for HTML text and attribute positions. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Control characters except tab and newline (text bodies), and all of them (subjects).
// deno-lint-ignore no-control-regex
const TEXT_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]+/g;
// deno-lint-ignore no-control-regex
const ALL_CONTROLS = /[\u0000-\u001f\u007f]+/g;
const plain = (v: unknown): string => String(v).replace(TEXT_CONTROLS, " ");
const oneLine = (v: unknown): string => String(v).replace(ALL_CONTROLS, " ").trim();
const app = (v: { appName?: string }): string =>
  typeof v.appName === "string" && v.appName.trim() ? v.appName : DEFAULT_APP_NAME;

function safeUrl(url: unknown): string | null {
  try {
    const u = new URL(String(url));
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}

function layout(appName: string, paragraphs: string[], link?: { url: unknown; label: string }) {
  const href = link ? safeUrl(link.url) : null;
  const button = link
    ? href
      ? `<p><a href="${escapeHtml(href)}" style="display:inline-block;padding:10px 16px;` +
        `background:#1d4ed8;color:#fff;border-radius:6px;text-decoration:none">` +
        `${escapeHtml(link.label)}</a></p><p style="font-size:12px;color:#555">` +
        `${escapeHtml(href)}</p>`
      : `<p>${escapeHtml(link.url)}</p>`
    : "";
  return `<!doctype html><html><body style="font-family:system-ui,sans-serif;max-width:32rem;` +
    `margin:auto;padding:1rem"><h2>${escapeHtml(appName)}</h2>` +
    paragraphs.map((p) => `<p>${p}</p>`).join("") + button + `</body></html>`;
}

/**
 * The one-time code sent at signup.
 *
 * @example
 * ```ts
 * import { otpEmail } from "@gatehouse/gatehouse/d1";
 * const { subject } = otpEmail({ code: "123456", ttlMinutes: 10, appName: "Acme" });
 * ```
 */
export function otpEmail(
  v: { code: string; ttlMinutes: number; appName?: string },
): RenderedEmail {
  const name = app(v);
  return {
    subject: oneLine(`${name}: your code is ${v.code}`),
    html: layout(name, [
      `Your verification code is <strong style="font-size:1.4em;letter-spacing:.2em">` +
      `${escapeHtml(v.code)}</strong>`,
      `It expires in ${
        escapeHtml(v.ttlMinutes)
      } minutes. If you did not sign up, ignore this e-mail.`,
    ]),
    text: plain(
      `Your ${name} verification code is ${v.code}\n\nIt expires in ${v.ttlMinutes} minutes. ` +
        `If you did not sign up, ignore this e-mail.\n`,
    ),
  };
}

/**
 * A link to verify an e-mail address.
 *
 * @example
 * ```ts
 * import { verifyEmail } from "@gatehouse/gatehouse/d1";
 * verifyEmail({ verifyUrl: "https://example.com/verify?token=t", ttlHours: 24 });
 * ```
 */
export function verifyEmail(
  v: { verifyUrl: string; ttlHours: number; appName?: string },
): RenderedEmail {
  const name = app(v);
  return {
    subject: oneLine(`${name}: verify your e-mail address`),
    html: layout(name, [
      `Confirm that this is your e-mail address. The link expires in ${
        escapeHtml(v.ttlHours)
      } hours.`,
    ], { url: v.verifyUrl, label: "Verify e-mail" }),
    text: plain(
      `Confirm that this is your ${name} e-mail address:\n\n${v.verifyUrl}\n\n` +
        `The link expires in ${v.ttlHours} hours.\n`,
    ),
  };
}

/**
 * The password reset link.
 *
 * @example
 * ```ts
 * import { passwordResetEmail } from "@gatehouse/gatehouse/d1";
 * passwordResetEmail({ resetUrl: "https://example.com/reset?token=t", ttlHours: 1 });
 * ```
 */
export function passwordResetEmail(
  v: { resetUrl: string; ttlHours: number; appName?: string },
): RenderedEmail {
  const name = app(v);
  return {
    subject: oneLine(`${name}: reset your password`),
    html: layout(name, [
      `Someone asked to reset the password of your account. If it was you, choose a new one ` +
      `below; the link works once and expires in ${escapeHtml(v.ttlHours)} hours.`,
      `If it was not you, ignore this e-mail: your password stays as it is.`,
    ], { url: v.resetUrl, label: "Choose a new password" }),
    text: plain(
      `Someone asked to reset the password of your ${name} account. If it was you, open:\n\n` +
        `${v.resetUrl}\n\nThe link works once and expires in ${v.ttlHours} hours. ` +
        `If it was not you, ignore this e-mail.\n`,
    ),
  };
}

/**
 * The confirmation link sent to a new address during a self-service e-mail change.
 *
 * @example
 * ```ts
 * import { emailChangeEmail } from "@gatehouse/gatehouse/d1";
 * emailChangeEmail({ confirmUrl: "https://e.com/c?token=t", newEmail: "a@e.com", ttlHours: 24 });
 * ```
 */
export function emailChangeEmail(
  v: { confirmUrl: string; newEmail: string; ttlHours: number; appName?: string },
): RenderedEmail {
  const name = app(v);
  return {
    subject: oneLine(`${name}: confirm your new e-mail address`),
    html: layout(name, [
      `Confirm <strong>${escapeHtml(v.newEmail)}</strong> as the new address of your account. ` +
      `The link works once and expires in ${escapeHtml(v.ttlHours)} hours.`,
    ], { url: v.confirmUrl, label: "Confirm new address" }),
    text: plain(
      `Confirm ${v.newEmail} as the new address of your ${name} account:\n\n${v.confirmUrl}\n\n` +
        `The link works once and expires in ${v.ttlHours} hours.\n`,
    ),
  };
}

/**
 * The notice that an account was deleted.
 *
 * @example
 * ```ts
 * import { accountDeletedEmail } from "@gatehouse/gatehouse/d1";
 * accountDeletedEmail({ email: "ada@example.com", appName: "Acme" });
 * ```
 */
export function accountDeletedEmail(v: { email?: string; appName?: string }): RenderedEmail {
  const name = app(v);
  const who = v.email ? ` (${v.email})` : "";
  return {
    subject: oneLine(`${name}: your account was deleted`),
    html: layout(name, [
      `Your account${escapeHtml(who)} and its data were deleted. We are sorry to see you go.`,
    ]),
    text: plain(`Your ${name} account${who} and its data were deleted.\n`),
  };
}

/**
 * The notice sent instead of a code when someone signs up with an address that already has
 * a verified account.
 *
 * @example
 * ```ts
 * import { accountExistsEmail } from "@gatehouse/gatehouse/d1";
 * accountExistsEmail({ appName: "Acme" });
 * ```
 */
export function accountExistsEmail(v: { appName?: string }): RenderedEmail {
  const name = app(v);
  return {
    subject: oneLine(`${name}: someone tried to sign up with your address`),
    html: layout(name, [
      `Someone tried to create an account with this e-mail address, which already has one.`,
      `If it was you, sign in instead, or reset your password if you forgot it. If it was not ` +
      `you, no action is needed.`,
    ]),
    text: plain(
      `Someone tried to create a ${name} account with this e-mail address, which already ` +
        `has one. If it was you, sign in or reset your password. Otherwise ignore this e-mail.\n`,
    ),
  };
}

/**
 * The notice sent to the old address once an e-mail change is confirmed.
 *
 * @example
 * ```ts
 * import { emailChangedNoticeEmail } from "@gatehouse/gatehouse/d1";
 * emailChangedNoticeEmail({ newEmail: "new@example.com" });
 * ```
 */
export function emailChangedNoticeEmail(
  v: { newEmail: string; appName?: string },
): RenderedEmail {
  const name = app(v);
  return {
    subject: oneLine(`${name}: your e-mail address was changed`),
    html: layout(name, [
      `The e-mail address of your account was changed to <strong>${escapeHtml(v.newEmail)}` +
      `</strong>. If you did not do this, contact us right away.`,
    ]),
    text: plain(
      `The e-mail address of your ${name} account was changed to ${v.newEmail}. ` +
        `If you did not do this, contact us right away.\n`,
    ),
  };
}
