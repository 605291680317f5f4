/**
 * The multi-user demo site (mounted at `/users`): the `/d1` flows on the app's libSQL
 * database. Visitors sign up (a 6-digit code is e-mailed), verify, sign in, ask for a reset
 * link and choose a new password; signed in, they change their name, password or e-mail
 * address (confirmation link to the new one), sign out (this session, in every copy of its
 * cookie, or every session), or delete the account. Sessions carry the user id, bound to the
 * user's security stamp; a sign-out records the session's id in `revoked_sessions`.
 *
 * Variables: `DATABASE_URL` (default `file:.data/gatehouse.db`; the directory is created),
 * `DATABASE_AUTH_TOKEN`, `USERS_SESSION_SECRET` and `TOKEN_SECRET` (development defaults,
 * required in production), `APP_URL` / `APP_HOSTS` (public origin of e-mailed links, see
 * `public_url.ts`).
 * E-mail goes through the HTTP mail API when `MAIL_API_KEY` is set; otherwise, in
 * development, to the outbox shown at `/users/outbox`.
 *
 * Cross-site posts never reach these routes: the app refuses them for every site
 * (`app/middleware/cross_site.ts`). *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import {
  clearOAuthStateCookie,
  clearSessionCookie,
  configuredProviders,
  emailAllowed,
  handleOAuthCallback,
  type OAuthConfig,
  type OAuthProvider,
  parseAccessMode,
  type SessionConfig,
  startOAuth,
} from "../mod.ts";
import {
  authEventStore,
  checkResetToken,
  createUserSession,
  type D1Database,
  type EmailSender,
  findOrCreateOAuthUser,
  getSecondFactors,
  listLinkedSignIns,
  listPasskeys,
  listUserSessions,
  login,
  migrate,
  readUserSession,
  type RelyingParty,
  requestPasswordReset,
  resetPassword,
  signOut,
  signOutEverywhere,
  signup,
  verifyOtp,
} from "../d1.ts";
import type { AppEnv } from "./env.ts";
import { openAppDatabase } from "./database.ts";
import { siteSecret } from "./dev_secret.ts";
import { publicOrigin } from "./public_url.ts";
import { clientAddress, type ConnectionInfo } from "./client_address.ts";
import { oauthClients } from "./dev_idp.ts";
import { mailSenderFromEnv } from "./mailer.ts";
import { createOutbox, type Outbox } from "./outbox.ts";
import { answerError, answerOk, codeParam, mountClientScript, renderPage } from "./auth_pages.ts";
import { forbiddenResponse } from "./site_page.ts";
import { accountPage, USERS_SITE } from "./account_page.ts";
import { mountAccountRoutes } from "./account_routes.ts";
import { deadResetLinkPage } from "./reset_page.ts";
import {
  cookie,
  DEVICE_COOKIE,
  mountSignInFactorRoutes,
  TICKET_COOKIE,
} from "./sign_in_factors.ts";
import { mountSecurityRoutes } from "./security_routes.ts";
import { ACCOUNT_SCRIPT, accountBundle } from "./client_bundle.ts";

const APP_NAME = "Gatehouse multi-user demo";

/** Keeps a signup's attempt in the browser that signed up; `verifyOtp` needs it with the code. */
const ATTEMPT_COOKIE = "__Host-users-signup";
const attemptCookie = (value: string, maxAge: number) =>
  `${ATTEMPT_COOKIE}=${value}; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${maxAge}`;

/** Options of {@linkcode createUsersSite}. */
export interface UsersSiteOptions {
  /** The app's environment. */
  env: AppEnv;
  /** Mount path; default `/users`. */
  base?: string;
  /** Use this database instead of opening `DATABASE_URL` (tests). */
  db?: D1Database;
  /** PBKDF2 iterations for new hashes (tests); default the core's. */
  iterations?: number;
}

async function form(c: Context): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const type = c.req.header("content-type") ?? "";
  if (type.includes("application/json")) {
    const body = await c.req.json().catch(() => ({}));
    for (const [k, v] of Object.entries(body ?? {})) if (typeof v === "string") out[k] = v;
    return out;
  }
  const body = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
  for (const [k, v] of Object.entries(body)) if (typeof v === "string") out[k] = v;
  return out;
}

const STATUS: Record<string, 400 | 401 | 403 | 409 | 429> = {
  invalid_credentials: 401,
  wrong_password: 401,
  email_not_verified: 403,
  reauth_required: 403,
  too_many_attempts: 429,
  email_taken: 409,
};

/**
 * Builds the multi-user site (routes relative to its mount path).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { loadAppEnv } from "./env.ts";
 * import { createUsersSite } from "./users.ts";
 * const app = new Hono().route("/users", await createUsersSite({ env: loadAppEnv({}) }));
 * ```
 */
export async function createUsersSite(options: UsersSiteOptions): Promise<Hono> {
  const { env } = options;
  const base = options.base ?? "/users";
  const iterations = options.iterations;
  const production = env.MODE === "production";
  const session: SessionConfig = {
    secret: siteSecret(env, "USERS_SESSION_SECRET"),
    cookieName: "__Host-users-session",
  };
  const secret = siteSecret(env, "TOKEN_SECRET");
  const db = options.db ?? await openAppDatabase(env);
  await migrate(db);
  const real = mailSenderFromEnv(env);
  let outbox: Outbox | null = null;
  if (!real) {
    if (production) {
      throw new Error("users site: MAIL_API_KEY and MAIL_FROM must be set in production");
    }
    outbox = await createOutbox(db);
  }
  const sendEmail: EmailSender = real ?? outbox!.send;
  // Links and redirect URIs use the configured public origin, never the Host header.
  const origin = (c: Context) => publicOrigin(env, c.req.raw);
  const appUrl = (c: Context) => `${origin(c)}${base}`;
  // Mail that must not be part of an answer's time (signup codes and notices, reset and
  // e-mail-change links: the answer must not tell whether the account exists) is sent after
  // it; the development outbox waits for it.
  const sending = new Set<Promise<unknown>>();
  const waitUntil = (delivery: Promise<unknown>) => {
    sending.add(delivery);
    const done = () => void sending.delete(delivery);
    delivery.then(done, done);
  };
  // The client's address for the sign-in throttle (TRUSTED_PROXIES names proxies to look behind).
  const clientOf = clientAddress(env);
  const client = (c: Context) => clientOf(c.req.raw, c.env as ConnectionInfo | undefined);
  // Every sign-in outcome, factor change and ended session goes to auth_events (the console
  // lists them per account).
  const onEvent = authEventStore(db);
  // Passkeys belong to the public origin's host (the RP ID) and are checked against it.
  const rp = (c: Context): RelyingParty => {
    const o = origin(c);
    return { id: new URL(o).hostname, name: APP_NAME, origin: o };
  };
  // USERS_REQUIRE_SECOND_FACTOR=1: every account sets up an authenticator app to sign in.
  const requireSecondFactor = env.vars.USERS_REQUIRE_SECOND_FACTOR === "1";

  const app = new Hono();
  mountClientScript(app);
  const fail = (c: Context, code: string, page: string, keep: Record<string, string> = {}) =>
    answerError(c, code, STATUS[code] ?? 400, page, keep);
  // Sessions are bound to the user's stamp: a password change, reset, e-mail change or
  // "sign out everywhere" ends every cookie issued before.
  // Each session is recorded (device, network, times) so the account page can list and end it.
  const signIn = async (c: Context, userId: string, method = "password") => {
    const s = await createUserSession(db, {
      session,
      userId,
      record: {
        userAgent: (c.req.header("user-agent") ?? "").slice(0, 512),
        ip: client(c),
        method,
      },
    });
    if (s.ok) c.header("set-cookie", s.setCookie, { append: true });
  };
  const current = (c: Context) =>
    readUserSession(db, { session, request: c.req.raw, recorded: true });

  // OAuth sign-in: real clients from <PROVIDER>_CLIENT_ID/_SECRET, else the development
  // provider (development mode only). Optional allowlist: USERS_ACCESS_MODE (default public),
  // USERS_OWNER_EMAILS, USERS_ACCESS_DOMAINS; a refused e-mail gets 403 forbidden.
  const oauth = (c: Context): OAuthConfig => ({
    clients: oauthClients(env, origin(c)),
    stateSecret,
    stateCookieName: "__Host-users-oauth",
    redirectUri: (p) => `${origin(c)}${base}/api/auth/oauth/${p}/callback`,
  });
  const providers = configuredProviders({
    clients: oauthClients(env, "http://localhost"),
    stateSecret: "-",
    redirectUri: () => "",
  });
  const sso = providers.length ? { providers, basePath: base } : undefined;
  // Checked at start: production without STATE_SECRET refuses to run with providers set.
  const stateSecret = providers.length ? siteSecret(env, "STATE_SECRET") : "unused";
  const mode = parseAccessMode(env.vars.USERS_ACCESS_MODE ?? "public");
  const allowed = (email: string) =>
    emailAllowed({
      mode,
      email,
      owners: env.vars.USERS_OWNER_EMAILS ?? "",
      domains: env.vars.USERS_ACCESS_DOMAINS ?? "",
    });

  // Account page (signed in) ---------------------------------------------------------------
  const home = async (c: Context) => {
    const me = await current(c);
    if (!me) return c.redirect(`${base}/api/auth/login`, 302);
    const linked = await listLinkedSignIns(db, me.user.id);
    const to = c.req.query("to");
    const [factors, passkeys, sessions] = await Promise.all([
      getSecondFactors(db, { userId: me.user.id }),
      listPasskeys(db, me.user.id),
      listUserSessions(db, { userId: me.user.id, currentId: me.session.id }),
    ]);
    const now = Date.now();
    const mine = sessions.ok ? sessions.sessions.find((s) => s.current) : undefined;
    const fresh = now - me.session.issuedAt * 1000 < 300_000 ||
      (mine !== undefined && now - mine.verifiedAt < 300_000);
    const js = await accountBundle();
    return accountPage({
      script: js === null ? undefined : `${base}/${ACCOUNT_SCRIPT}`,
      security: {
        base,
        hasPassword: me.user.hasPassword,
        factors: factors.ok ? factors.factors : null,
        passkeys: passkeys.ok ? passkeys.passkeys : [],
        sessions: sessions.ok ? sessions.sessions : [],
        fresh,
        passkeyActions: {
          optionsAction: `${base}/account/passkeys/options`,
          verifyAction: `${base}/account/passkeys/verify`,
        },
      },
      base,
      user: me.user,
      session: me.session,
      linked: linked.ok ? linked.signIns : [],
      done: codeParam(c, "done"),
      to: to && to.length <= 254 ? to : undefined,
      error: codeParam(c, "error"),
    });
  };
  app.get("/", home);
  app.get("/:slash{/?}", home);

  // Sign-in pages (react.ts) ---------------------------------------------------------------
  app.get("/login", (c) =>
    renderPage(c, base, {
      page: "login",
      props: {
        action: `${base}/api/auth/login`,
        signupHref: `${base}/signup`,
        forgotHref: `${base}/forgot`,
        error: codeParam(c, "error") ?? codeParam(c, "oauth_error"),
        email: c.req.query("email"),
        notice: c.req.query("reset")
          ? "Your password was changed. Sign in with it."
          : c.req.query("signed_out")
          ? "You are signed out."
          : undefined,
        passkey: {
          optionsAction: `${base}/api/auth/passkey/options`,
          verifyAction: `${base}/api/auth/passkey/verify`,
        },
      },
      sso,
    }));
  app.get("/api/auth/login", (c) => c.redirect(`${base}/login`, 302));
  app.get("/signup", (c) =>
    renderPage(c, base, {
      page: "signup",
      props: {
        action: `${base}/api/auth/signup`,
        loginHref: `${base}/login`,
        error: codeParam(c, "error"),
        email: c.req.query("email"),
      },
    }));
  app.get("/verify", (c) =>
    renderPage(c, base, {
      page: "verify",
      props: {
        action: `${base}/api/auth/verify`,
        email: c.req.query("email"),
        signupHref: `${base}/signup`,
        loginHref: `${base}/login`,
        error: codeParam(c, "error"),
        notice: outbox ? "Development: the code is in the outbox." : undefined,
        moreLinks: outbox ? [{ href: `${base}/outbox`, label: "Open the outbox" }] : undefined,
      },
    }));
  app.get("/forgot", (c) =>
    renderPage(c, base, {
      page: "forgot",
      props: {
        action: `${base}/api/auth/forgot`,
        loginHref: `${base}/login`,
        error: codeParam(c, "error"),
        sent: c.req.query("sent") === "1",
      },
    }));
  // The link is checked when it is opened: a used or expired one says so, with the next step.
  app.get("/reset", async (c) => {
    const token = c.req.query("token") ?? "";
    if (!token) return deadResetLinkPage(base, { missing: true });
    const link = await checkResetToken(db, { token, secret });
    if (!link.ok && link.error === "invalid_token") return deadResetLinkPage(base);
    return renderPage(c, base, {
      page: "reset",
      props: {
        token,
        action: `${base}/api/auth/reset`,
        loginHref: `${base}/login`,
        forgotHref: `${base}/forgot`,
        error: codeParam(c, "error") ?? (link.ok ? undefined : link.error),
      },
    });
  });

  // Form actions ---------------------------------------------------------------------------
  app.post("/api/auth/signup", async (c) => {
    const f = await form(c);
    const r = await signup(db, {
      email: f.email ?? "",
      password: f.password ?? "",
      secret,
      sendEmail,
      waitUntil,
      appName: APP_NAME,
      iterations,
    });
    if (!r.ok) return fail(c, r.error, `${base}/signup`, { email: f.email ?? "" });
    c.header("set-cookie", attemptCookie(r.attempt, 86_400), { append: true });
    return answerOk(c, `${base}/verify?email=${encodeURIComponent((f.email ?? "").trim())}`);
  });
  app.post("/api/auth/verify", async (c) => {
    const f = await form(c);
    const attempt = getCookie(c, ATTEMPT_COOKIE) ?? "";
    const r = await verifyOtp(db, {
      email: f.email ?? "",
      code: f.code ?? "",
      attempt,
      secret,
      client: client(c),
      requireSecondFactor,
      onEvent,
    });
    // Verified, and the site asks every account for a second factor: set one up first.
    if (!r.ok && "ticket" in r && r.ticket) {
      c.header("set-cookie", attemptCookie("", 0), { append: true });
      c.header("set-cookie", cookie(TICKET_COOKIE, r.ticket, 300), { append: true });
      return answerOk(c, `${base}/second-factor/setup`);
    }
    if (!r.ok) return fail(c, r.error, `${base}/verify`, { email: f.email ?? "" });
    c.header("set-cookie", attemptCookie("", 0), { append: true });
    await signIn(c, r.userId);
    return answerOk(c, `${base}/`);
  });
  app.post("/api/auth/login", async (c) => {
    const f = await form(c);
    const r = await login(db, {
      email: f.email ?? "",
      password: f.password ?? "",
      client: client(c),
      iterations,
      secret,
      trustedDevice: getCookie(c, DEVICE_COOKIE),
      requireSecondFactor,
      onEvent,
    });
    // Right password, and a second step is due: its ticket stays in this browser.
    if (!r.ok && "ticket" in r && r.ticket) {
      c.header("set-cookie", cookie(TICKET_COOKIE, r.ticket, 300), { append: true });
      const next = r.error === "second_factor_required" ? "/second-factor" : "/second-factor/setup";
      return answerOk(c, `${base}${next}`);
    }
    if (!r.ok) {
      if (r.retryAfter) c.header("retry-after", String(r.retryAfter));
      if (r.error === "email_not_verified") {
        return fail(c, r.error, `${base}/verify`, { email: f.email ?? "" });
      }
      return fail(c, r.error, `${base}/login`, { email: f.email ?? "" });
    }
    await signIn(c, r.userId);
    return answerOk(c, `${base}/`);
  });
  app.post("/api/auth/forgot", async (c) => {
    const f = await form(c);
    await requestPasswordReset(db, {
      email: f.email ?? "",
      secret,
      sendEmail,
      appUrl: appUrl(c),
      resetPath: "/reset",
      appName: APP_NAME,
      waitUntil,
    });
    return answerOk(c, `${base}/forgot?sent=1`);
  });
  app.post("/api/auth/reset", async (c) => {
    const f = await form(c);
    const r = await resetPassword(db, {
      token: f.token ?? "",
      newPassword: f.password ?? "",
      secret,
      appName: APP_NAME,
      iterations,
    });
    if (!r.ok) {
      return fail(c, r.error, `${base}/reset`, { token: f.token ?? "" });
    }
    return answerOk(c, `${base}/login?reset=1`);
  });
  app.post("/account/sessions", async (c) => {
    const me = await current(c);
    if (me) await signOutEverywhere(db, { userId: me.user.id, onEvent });
    c.header("set-cookie", clearSessionCookie(session));
    return c.redirect(`${base}/login`, 303);
  });
  // Sign-out ends this session everywhere (a copied cookie stops working too); the user's
  // other devices stay signed in. The cookie goes from this browser even when the database
  // fails, and the login page then says the service had trouble.
  app.post("/logout", async (c) => {
    const out = await signOut(db, { session, request: c.req.raw, onEvent });
    c.header("set-cookie", clearSessionCookie(session));
    return c.redirect(`${base}/login${out.ok ? "?signed_out=1" : `?error=${out.error}`}`, 303);
  });

  // Passkey sign-in and the second step: sign_in_factors.ts; security settings:
  // security_routes.ts ---------------------------------------------------------------------
  const factorDeps = { base, db, secret, appName: APP_NAME, rp, client, signIn, onEvent, form };
  mountSignInFactorRoutes(app, factorDeps);
  mountSecurityRoutes(app, { ...factorDeps, iterations, current });
  app.get(`/${ACCOUNT_SCRIPT}`, async (c) => {
    const js = await accountBundle();
    if (js === null) return c.text("not available", 404);
    return c.body(js, 200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "no-cache",
    });
  });

  // Account changes (signed in): account_routes.ts ----------------------------------------
  mountAccountRoutes(app, {
    base,
    db,
    session,
    secret,
    sendEmail,
    waitUntil,
    appName: APP_NAME,
    iterations,
    appUrl,
    current,
    signIn,
    form,
    onEvent,
  });

  // OAuth sign-in ---------------------------------------------------------------------------
  app.get("/api/auth/oauth/:provider/start", async (c) => {
    const provider = c.req.param("provider") as OAuthProvider;
    if (!providers.includes(provider)) return c.text("not found", 404);
    return await startOAuth(oauth(c), provider);
  });
  app.get("/api/auth/oauth/:provider/callback", async (c) => {
    const provider = c.req.param("provider") as OAuthProvider;
    if (!providers.includes(provider)) return c.text("not found", 404);
    const config = oauth(c);
    // Accounts are keyed on the provider's user id: an e-mail the provider does not prove may
    // still make a new account (findOrCreateOAuthUser never matches it to an existing one),
    // but it passes no allowlist.
    const result = await handleOAuthCallback(config, provider, c.req.raw, {
      allowUnverifiedEmail: true,
    });
    c.header("set-cookie", clearOAuthStateCookie(config), { append: true });
    if (!result.ok) {
      return c.redirect(`${base}/login?oauth_error=${encodeURIComponent(result.error)}`, 302);
    }
    if (!result.user.emailVerified && mode !== "public") {
      return c.redirect(`${base}/login?oauth_error=email_unverified`, 302);
    }
    if (!allowed(result.user.email)) {
      return forbiddenResponse(c, {
        site: USERS_SITE,
        home: `${base}/`,
        signIn: `${base}/login`,
        email: result.user.email,
      });
    }
    const linked = await findOrCreateOAuthUser(db, {
      provider,
      providerUserId: result.user.providerUserId,
      email: result.user.email,
      emailVerified: result.user.emailVerified,
      client: client(c),
      secret,
      trustedDevice: getCookie(c, DEVICE_COOKIE),
      requireSecondFactor,
      onEvent,
    });
    // A provider is one factor, as a password is: the account's second step follows.
    if (!linked.ok && "ticket" in linked && linked.ticket) {
      c.header("set-cookie", cookie(TICKET_COOKIE, linked.ticket, 300), { append: true });
      const next = linked.error === "second_factor_required"
        ? "/second-factor"
        : "/second-factor/setup";
      c.header("cache-control", "no-store");
      return c.redirect(`${base}${next}`, 302);
    }
    if (!linked.ok) {
      return c.redirect(`${base}/login?oauth_error=${encodeURIComponent(linked.error)}`, 302);
    }
    await signIn(c, linked.userId, `oauth:${provider}`);
    c.header("cache-control", "no-store");
    return c.redirect(`${base}/`, 302);
  });

  // Development outbox ----------------------------------------------------------------------
  if (outbox) {
    const box = outbox;
    app.get("/outbox", async (c) => {
      await Promise.allSettled(sending);
      c.header("cache-control", "no-store");
      return c.html(await box.page({ title: "Outbox", site: USERS_SITE, home: `${base}/` }));
    });
  }
  return app;
}
