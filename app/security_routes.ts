/**
 * The multi-user site's security settings, for a signed-in user: the authenticator app (set
 * up with its QR code, new backup codes, removal), passkeys (add with JavaScript, rename,
 * remove — never the last way in), the password's removal for a passkey-only account, the
 * sessions (end one, end all others, name one) and the step-up ("confirm it's you") that the
 * changes ask for when the session is older than 5 minutes. Each goes through its `/d1` flow.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { getCookie } from "hono/cookie";
import {
  type AuthEventSink,
  confirmTotpEnrolment,
  type D1Database,
  endOtherSessions,
  endSession,
  passkeyRegistrationOptions,
  regenerateBackupCodes,
  type RelyingParty,
  removePasskey,
  removePassword,
  removeTotp,
  renamePasskey,
  renameSession,
  startTotpEnrolment,
  stepUp,
  totpQrSvg,
  type UserSession,
  verifyPasskeyRegistration,
} from "../d1.ts";
import { answerError, answerOk, codeParam, renderPage } from "./auth_pages.ts";
import { backupCodesAnswer, cookie, PASSKEY_COOKIE } from "./sign_in_factors.ts";

/** What the routes need from the site. */
export interface SecurityRoutesDeps {
  base: string;
  db: D1Database;
  secret: string;
  appName: string;
  iterations?: number;
  rp(c: Context): RelyingParty;
  client(c: Context): string | undefined;
  current(c: Context): Promise<UserSession | null>;
  signIn(c: Context, userId: string, method: string): Promise<void>;
  onEvent: AuthEventSink;
  form(c: Context): Promise<Record<string, string>>;
}

/** Adds the routes to the site. */
export function mountSecurityRoutes(app: Hono, d: SecurityRoutesDeps): void {
  const { base, db, secret, onEvent } = d;
  const home = (c: Context, q: string) => c.redirect(`${base}/?${q}`, 303);
  /** A POST of a signed-in user that ends on the account page with `done` or `error`. */
  const action = (
    path: string,
    done: string,
    act: (me: UserSession, f: Record<string, string>, c: Context) => Promise<
      { ok: boolean; error?: string }
    >,
  ) =>
    app.post(path, async (c) => {
      const me = await d.current(c);
      if (!me) return c.redirect(`${base}/login`, 303);
      const r = await act(me, await d.form(c), c);
      return home(c, r.ok ? `done=${done}` : `error=${encodeURIComponent(r.error ?? "error")}`);
    });

  // Authenticator app ------------------------------------------------------------------------
  app.get("/account/totp", async (c) => {
    const me = await d.current(c);
    if (!me) return c.redirect(`${base}/login`, 302);
    const s = await startTotpEnrolment(db, {
      userId: me.user.id,
      session: me.session,
      secret,
      issuer: d.appName,
      // Shown again after a wrong code: the key and QR code already scanned stay.
      keepPending: codeParam(c, "error") !== undefined,
    });
    if (!s.ok) return c.redirect(`${base}/?error=${s.error}`, 302);
    return renderPage(c, base, {
      page: "totp-setup",
      props: {
        action: `${base}/account/totp/confirm`,
        qrSvg: totpQrSvg(s.uri, { title: "QR code to scan with an authenticator app" }),
        secret: s.secret,
        continueHref: `${base}/`,
        error: codeParam(c, "error"),
      },
    });
  });
  app.post("/account/totp/confirm", async (c) => {
    const me = await d.current(c);
    if (!me) return answerError(c, "reauth_required", 403, `${base}/login`);
    const f = await d.form(c);
    const r = await confirmTotpEnrolment(db, {
      userId: me.user.id,
      code: f.code ?? "",
      secret,
      client: d.client(c),
      onEvent,
    });
    if (!r.ok) {
      return answerError(
        c,
        r.error,
        r.error === "too_many_attempts" ? 429 : 400,
        `${base}/account/totp`,
      );
    }
    return backupCodesAnswer(c, base, r.backupCodes, d.appName);
  });
  app.post("/account/backup-codes", async (c) => {
    const me = await d.current(c);
    if (!me) return c.redirect(`${base}/login`, 303);
    const r = await regenerateBackupCodes(db, {
      userId: me.user.id,
      session: me.session,
      secret,
      onEvent,
    });
    if (!r.ok) return home(c, `error=${r.error}`);
    return backupCodesAnswer(c, base, r.backupCodes, d.appName);
  });
  action(
    "/account/totp/remove",
    "totp_removed",
    (me) => removeTotp(db, { userId: me.user.id, session: me.session, secret, onEvent }),
  );

  // Passkeys (adding one needs JavaScript: the account page shows the form once it runs) ----
  app.post("/account/passkeys/options", async (c) => {
    const me = await d.current(c);
    c.header("cache-control", "no-store");
    if (!me) return c.json({ error: "reauth_required" }, 403);
    const r = await passkeyRegistrationOptions(db, {
      userId: me.user.id,
      session: me.session,
      rp: d.rp(c),
    });
    if (!r.ok) return c.json({ error: r.error }, r.error === "reauth_required" ? 403 : 400);
    c.header("set-cookie", cookie(PASSKEY_COOKIE, r.ceremony, 300), { append: true });
    return c.json({ options: r.options });
  });
  app.post("/account/passkeys/verify", async (c) => {
    const me = await d.current(c);
    if (!me) return c.json({ error: "reauth_required" }, 403);
    const body = await c.req.json().catch(() => ({})) as Record<string, unknown>;
    const r = await verifyPasskeyRegistration(db, {
      userId: me.user.id,
      session: me.session,
      ceremony: getCookie(c, PASSKEY_COOKIE) ?? "",
      response: body?.response,
      name: typeof body?.name === "string" ? body.name : undefined,
      rp: d.rp(c),
      onEvent,
    });
    c.header("set-cookie", cookie(PASSKEY_COOKIE, "", 0), { append: true });
    if (!r.ok) return answerError(c, r.error, 400, `${base}/`);
    return answerOk(c, `${base}/?done=passkey_added`);
  });
  action(
    "/account/passkeys/rename",
    "passkey_renamed",
    (me, f) => renamePasskey(db, { userId: me.user.id, passkeyId: f.id ?? "", name: f.name ?? "" }),
  );
  action(
    "/account/passkeys/remove",
    "passkey_removed",
    (me, f) =>
      removePasskey(db, {
        userId: me.user.id,
        passkeyId: f.id ?? "",
        session: me.session,
        onEvent,
      }),
  );
  action("/account/password/remove", "password_removed", async (me, f, c) => {
    const r = await removePassword(db, {
      userId: me.user.id,
      ...(f.password ? { password: f.password } : { session: me.session }),
      iterations: d.iterations,
      onEvent,
    });
    // Like any credential change, every session ended: this browser stays signed in.
    if (r.ok) await d.signIn(c, me.user.id, "password-removed");
    return r;
  });

  // Sessions ---------------------------------------------------------------------------------
  action(
    "/account/sessions/end",
    "session_ended",
    (me, f) => endSession(db, { userId: me.user.id, sessionId: f.id ?? "", onEvent }),
  );
  action(
    "/account/sessions/others",
    "others_ended",
    (me) => endOtherSessions(db, { userId: me.user.id, keepId: me.session.id, onEvent }),
  );
  action("/account/sessions/rename", "session_renamed", (me, f) =>
    renameSession(db, {
      userId: me.user.id,
      sessionId: f.id ?? "",
      name: f.name?.trim() ? f.name : null,
    }));

  // Step-up: confirm it's you (the password or a code) -------------------------------------
  action("/account/confirm", "confirmed", (me, f, c) =>
    stepUp(db, {
      userId: me.user.id,
      session: me.session,
      ...(f.code ? { code: f.code, secret } : { password: f.password ?? "" }),
      client: d.client(c),
      iterations: d.iterations,
      onEvent,
    }));
}
