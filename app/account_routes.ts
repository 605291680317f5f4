/**
 * The multi-user site's account changes, for a signed-in user: name, password (change, or set
 * a first one for an account made through a provider), e-mail (a link to the new address),
 * deletion (after a confirmation page, ending on a page that says what happened), and the
 * e-mail change link's page. Each goes through its `/d1` flow; `users.ts` mounts them.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { clearSessionCookie, type SessionConfig } from "../mod.ts";
import {
  type AuthEventSink,
  changeName,
  changePassword,
  confirmEmailChange,
  type D1Database,
  type EmailSender,
  removeUser,
  requestEmailChange,
  setPassword,
  type UserSession,
} from "../d1.ts";
import { deleteConfirmPage, deletedPage, emailChangePage } from "./account_page.ts";

/** What the routes need from the site. */
export interface AccountRoutesDeps {
  /** Mount path. */
  base: string;
  /** The site's database. */
  db: D1Database;
  /** The site's session settings. */
  session: SessionConfig;
  /** `TOKEN_SECRET`. */
  secret: string;
  /** The site's e-mail sender. */
  sendEmail: EmailSender;
  /** Keeps the e-mail a flow sends after answering (see the `/d1` flows' `waitUntil`). */
  waitUntil?: (delivery: Promise<unknown>) => void;
  /** Site name in e-mails. */
  appName: string;
  /** PBKDF2 iterations (tests). */
  iterations?: number;
  /** The site's public base URL for a request. */
  appUrl(c: Context): string;
  /** The signed-in user of a request. */
  current(c: Context): Promise<UserSession | null>;
  /** Signs this browser in again (after a credential change ended every session). */
  signIn(c: Context, userId: string): Promise<void>;
  /** The request's form fields. */
  form(c: Context): Promise<Record<string, string>>;
  /** Receives the sign-in events of the changes. */
  onEvent?: AuthEventSink;
}

/** Adds the account routes to the site. */
export function mountAccountRoutes(app: Hono, d: AccountRoutesDeps): void {
  const { base, db, session, secret, sendEmail, iterations, current, signIn, appUrl } = d;
  const APP_NAME = d.appName;
  const form = d.form;
  const account = (
    path: string,
    act: (
      me: NonNullable<Awaited<ReturnType<typeof current>>>,
      f: Record<string, string>,
      c: Context,
    ) => Promise<{ ok: boolean; error?: string; email?: string }>,
  ) =>
    app.post(path, async (c) => {
      const me = await current(c);
      if (!me) return c.redirect(`${base}/login`, 303);
      const r = await act(me, await form(c), c);
      if (!r.ok) return c.redirect(`${base}/?error=${encodeURIComponent(r.error ?? "error")}`, 303);
      // A password change ended every session; this browser stays signed in.
      if (path === "/account/password" || path === "/account/set-password") {
        await signIn(c, me.user.id);
      }
      return c.redirect(`${base}/?${done(path, r)}`, 303);
    });
  const done = (path: string, r: { email?: string }) => {
    if (path === "/account/email") {
      return `done=email_sent&to=${encodeURIComponent(r.email ?? "")}`;
    }
    return `done=${
      path === "/account/name" ? "name" : path === "/account/password" ? "password" : "password_set"
    }`;
  };
  account(
    "/account/name",
    (me, f) => changeName(db, { userId: me.user.id, name: f.name?.trim() ? f.name : null }),
  );
  account("/account/password", (me, f) =>
    changePassword(db, {
      userId: me.user.id,
      currentPassword: f.currentPassword ?? "",
      newPassword: f.newPassword ?? "",
      appName: APP_NAME,
      iterations,
      onEvent: d.onEvent,
    }));
  account("/account/set-password", (me, f) =>
    setPassword(db, {
      userId: me.user.id,
      newPassword: f.newPassword ?? "",
      session: me.session,
      appName: APP_NAME,
      iterations,
    }));
  account("/account/email", async (me, f, c) => {
    const r = await requestEmailChange(db, {
      userId: me.user.id,
      newEmail: f.newEmail ?? "",
      ...(f.password ? { password: f.password } : { session: me.session }),
      secret,
      sendEmail,
      waitUntil: d.waitUntil,
      appUrl: appUrl(c),
      confirmPath: "/confirm-email",
      appName: APP_NAME,
      iterations,
    });
    return r.ok ? { ok: true, email: (f.newEmail ?? "").trim() } : r;
  });
  app.get("/confirm-email", async (c) => {
    const r = await confirmEmailChange(db, {
      token: c.req.query("token") ?? "",
      secret,
      sendEmail,
      appName: APP_NAME,
      onEvent: d.onEvent,
    });
    return emailChangePage(base, r.ok ? { ok: true, email: r.email } : r);
  });
  app.get("/account/delete", async (c) => {
    const me = await current(c);
    if (!me) return c.redirect(`${base}/login`, 302);
    return deleteConfirmPage(base, me.user);
  });
  app.post("/account/delete", async (c) => {
    const me = await current(c);
    if (!me) return c.redirect(`${base}/login`, 303);
    const f = await form(c);
    if (f.confirm !== "yes") return deleteConfirmPage(base, me.user, "confirm");
    const r = await removeUser(db, {
      userId: me.user.id,
      ...(me.user.hasPassword ? { password: f.password ?? "" } : { session: me.session }),
      sendEmail,
      appName: APP_NAME,
      iterations,
    });
    if (!r.ok) return deleteConfirmPage(base, me.user, r.error);
    const res = deletedPage(base, me.user.email, r.notified);
    res.headers.append("set-cookie", clearSessionCookie(session));
    return res;
  });
}
