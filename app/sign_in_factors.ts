/**
 * The multi-user site's ways in besides the password: a passkey (usernameless, by the button
 * or the autofill list of the login page), and the second step after a password when the
 * account has an authenticator app (its code or a backup code, "remember this device"); with
 * `USERS_REQUIRE_SECOND_FACTOR=1`, accounts without one set it up before they are signed in.
 * Each goes through its `/d1` flow; `users.ts` mounts them.
 *
 * Cookies: `__Host-users-passkey` holds a passkey ceremony (5 minutes), `__Host-users-2fa` the
 * ticket of a second step (5 minutes), `__Host-users-device` a trusted device's token (as many
 * days as the device is trusted). All HttpOnly, Secure, SameSite=Lax.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import {
  type AuthEventSink,
  confirmTotpEnrolment,
  type D1Database,
  passkeySignInOptions,
  type RelyingParty,
  startTotpEnrolment,
  totpQrSvg,
  TRUSTED_DEVICE_DAYS,
  verifyPasskeySignIn,
  verifySecondFactor,
} from "../d1.ts";
import { answerError, answerOk, codeParam, renderPage, wantsHtml } from "./auth_pages.ts";

/** The ceremony of a passkey sign-in or registration. */
export const PASSKEY_COOKIE = "__Host-users-passkey";
/** The ticket of a second step. */
export const TICKET_COOKIE = "__Host-users-2fa";
/** A trusted device's token. */
export const DEVICE_COOKIE = "__Host-users-device";

/** A `Set-Cookie` value of the site's cookies. */
export const cookie = (name: string, value: string, maxAge: number): string =>
  `${name}=${value}; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${maxAge}`;

/** What the routes need from the site. */
export interface SignInFactorDeps {
  base: string;
  db: D1Database;
  /** `TOKEN_SECRET`. */
  secret: string;
  appName: string;
  /** The relying party of a request (its public origin). */
  rp(c: Context): RelyingParty;
  /** The client's address, for the throttles. */
  client(c: Context): string | undefined;
  /** Signs the browser in (records the session). */
  signIn(c: Context, userId: string, method: string): Promise<void>;
  onEvent: AuthEventSink;
  form(c: Context): Promise<Record<string, string>>;
}

const STATUS: Record<string, 400 | 401 | 403 | 429> = {
  invalid_code: 401,
  invalid_passkey: 401,
  invalid_challenge: 400,
  invalid_token: 401,
  too_many_attempts: 429,
};

/** The JSON body of a fetch request, or `{}`. */
async function json(c: Context): Promise<Record<string, unknown>> {
  const body = await c.req.json().catch(() => ({}));
  return typeof body === "object" && body !== null ? body as Record<string, unknown> : {};
}

/** Adds the routes to the site. */
export function mountSignInFactorRoutes(app: Hono, d: SignInFactorDeps): void {
  const { base, db, secret, onEvent } = d;

  // Passkey sign-in (JavaScript only: the login page shows the button once it runs).
  app.post("/api/auth/passkey/options", async (c) => {
    const r = await passkeySignInOptions(db, { rp: d.rp(c) });
    c.header("cache-control", "no-store");
    if (!r.ok) return c.json({ error: r.error }, 500);
    c.header("set-cookie", cookie(PASSKEY_COOKIE, r.ceremony, 300), { append: true });
    return c.json({ options: r.options });
  });
  app.post("/api/auth/passkey/verify", async (c) => {
    const body = await json(c);
    const r = await verifyPasskeySignIn(db, {
      ceremony: getCookie(c, PASSKEY_COOKIE) ?? "",
      response: body.response,
      rp: d.rp(c),
      onEvent,
    });
    c.header("set-cookie", cookie(PASSKEY_COOKIE, "", 0), { append: true });
    if (!r.ok) return answerError(c, r.error, STATUS[r.error] ?? 400, `${base}/login`);
    await d.signIn(c, r.userId, "passkey");
    return answerOk(c, `${base}/`);
  });

  // The second step after the password.
  app.get("/second-factor", (c) =>
    renderPage(c, base, {
      page: "second-factor",
      props: {
        action: `${base}/api/auth/second-factor`,
        loginHref: `${base}/login`,
        rememberDays: TRUSTED_DEVICE_DAYS.default,
        error: codeParam(c, "error"),
      },
    }));
  app.post("/api/auth/second-factor", async (c) => {
    const f = await d.form(c);
    const ticket = getCookie(c, TICKET_COOKIE) ?? "";
    const r = await verifySecondFactor(db, {
      ticket,
      code: f.code ?? "",
      secret,
      client: d.client(c),
      rememberDevice: f.remember === "1",
      deviceLabel: (c.req.header("user-agent") ?? "").slice(0, 200) || undefined,
      onEvent,
    });
    if (!r.ok) {
      if (r.retryAfter) c.header("retry-after", String(r.retryAfter));
      // A dead ticket (expired, forged): the sign-in starts again.
      const page = r.error === "invalid_token" ? `${base}/login` : `${base}/second-factor`;
      return answerError(c, r.error, STATUS[r.error] ?? 400, page);
    }
    c.header("set-cookie", cookie(TICKET_COOKIE, "", 0), { append: true });
    if (r.deviceToken) {
      const maxAge = TRUSTED_DEVICE_DAYS.default * 86_400;
      c.header("set-cookie", cookie(DEVICE_COOKIE, r.deviceToken, maxAge), { append: true });
    }
    await d.signIn(c, r.userId, r.method);
    return answerOk(c, `${base}/`, { backupCodesLeft: r.backupCodesLeft });
  });

  // A site that requires a second factor: set one up with the ticket, then be signed in.
  app.get("/second-factor/setup", async (c) => {
    const ticket = getCookie(c, TICKET_COOKIE) ?? "";
    // Shown again after a wrong code: the key and QR code already scanned stay.
    const s = await startTotpEnrolment(db, {
      ticket,
      secret,
      issuer: d.appName,
      keepPending: codeParam(c, "error") !== undefined,
    });
    if (!s.ok) return c.redirect(`${base}/login?error=${s.error}`, 303);
    return renderPage(c, base, {
      page: "totp-setup",
      props: {
        action: `${base}/api/auth/second-factor/setup`,
        qrSvg: totpQrSvg(s.uri, { title: "QR code to scan with an authenticator app" }),
        secret: s.secret,
        continueHref: `${base}/`,
        error: codeParam(c, "error"),
      },
    });
  });
  app.post("/api/auth/second-factor/setup", async (c) => {
    const f = await d.form(c);
    const ticket = getCookie(c, TICKET_COOKIE) ?? "";
    const r = await confirmTotpEnrolment(db, {
      ticket,
      code: f.code ?? "",
      secret,
      client: d.client(c),
      onEvent,
    });
    if (!r.ok) {
      return answerError(c, r.error, STATUS[r.error] ?? 400, `${base}/second-factor/setup`);
    }
    c.header("set-cookie", cookie(TICKET_COOKIE, "", 0), { append: true });
    await d.signIn(c, r.userId, "totp");
    return backupCodesAnswer(c, base, r.backupCodes, d.appName);
  });
}

/** The backup codes, shown once: a page for a form post, JSON for a fetch. */
export function backupCodesAnswer(
  c: Context,
  base: string,
  codes: string[],
  appName: string,
): Response | Promise<Response> {
  c.header("cache-control", "no-store");
  if (!wantsHtml(c)) return c.json({ ok: true, backupCodes: codes });
  return renderPage(c, base, {
    page: "backup-codes",
    props: { codes, continueHref: `${base}/`, appName },
  });
}
