/**
 * Signing in to the console, with the toolkit: a password (the `/d1` `login` flow and its
 * throttle), a provider (`startOAuth`/`handleOAuthCallback`), or the app's relay broker
 * (`verifyRelay` with the console's own relay secret and nonce). Whatever the method, only an
 * owner (`OWNER_EMAILS`) or a user with `is_admin = 1` gets a session; anyone else gets 403
 * `forbidden`, and no account is ever created for them. An owner signing in with a provider
 * for the first time gets an account (`findOrCreateOAuthUser`).
 *
 * Provider and broker sign-ins report their outcome to the site's sign-in events
 * (`authEventStore`, the table the users site writes and the users screen lists), with the
 * client's address, as the users site's do.
 *
 * Sessions are the `/d1` sessions bound to the user's stamp (`createUserSession`), so "sign
 * out everywhere", a password change or a deletion ends a console session too.
 *
 * @module
 */
import type { Context, Hono } from "hono";
import {
  clearOAuthStateCookie,
  configuredProviders,
  handleOAuthCallback,
  isOwner,
  type OAuthConfig,
  type OAuthProvider,
  type Secrets,
  type SessionConfig,
  signToken,
  startOAuth,
  verifyRelay,
  verifyToken,
} from "../../mod.ts";
import {
  authEventStore,
  createUserSession,
  type D1Database,
  findOrCreateOAuthUser,
  getUserByEmail,
  login,
  recordAudit,
} from "../../d1.ts";
import type { AppEnv } from "../env.ts";
import { oauthClients } from "../dev_idp.ts";
import { publicOrigin } from "../public_url.ts";
import { clientAddress, type ConnectionInfo } from "../client_address.ts";
import {
  answerError,
  answerOk,
  codeParam,
  mountClientScript,
  renderPage,
  wantsHtml,
} from "../auth_pages.ts";
import { cardPage, escapeHtml as esc } from "../html.ts";

/** How the console's provider buttons sign in: directly, or through the relay broker. */
export type SsoMode = "direct" | "relay";

/** Settings of {@linkcode mountSignIn}. */
export interface SignInSettings {
  /** The app's environment. */
  env: AppEnv;
  /** Mount path. */
  base: string;
  /** The toolkit's tables. */
  db: D1Database;
  /** The console's session cookie settings. */
  session: SessionConfig;
  /** `OWNER_EMAILS`. */
  owners: string;
  /** The console's secret at the relay broker. */
  relaySecret: string;
  /** Where the broker is mounted (e.g. `/broker`). */
  brokerPath: string;
  /** The console's id at the broker. */
  relaySiteId: string;
  /** Provider buttons: direct OAuth or through the broker. */
  sso: SsoMode;
  /** Signs OAuth state cookies. */
  stateSecret: string;
  /** PBKDF2 iterations (tests). */
  iterations?: number;
}

const NONCE_COOKIE = "__Host-console-relay";
const NONCE_PURPOSE = "console-relay-nonce";
const NONCE_TTL = 600;

const cookie = (name: string, value: string, maxAge: number) =>
  `${name}=${value}; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${maxAge}`;

/** Where to go after signing in: a console path, else the console's home. */
export function safeNext(base: string, raw: string | undefined | null): string {
  if (raw && raw.startsWith(`${base}/`) && !raw.startsWith("//") && !/[\\\s]/.test(raw)) {
    return raw;
  }
  return `${base}/`;
}

/** The refusal for someone who may not use the console, in words, with a way back. */
export function refusedPage(base: string): string {
  return cardPage(
    "This account may not use the console",
    `<p>You signed in, but the console is only for the site's owners and administrators. ` +
      `Nothing was changed.</p><p>If you should have access, ask an administrator to make ` +
      `your account an administrator.</p><p><a href="${esc(base)}/login">Sign in with another ` +
      `account</a> · <a href="/">Back to the app</a></p>`,
  );
}

/** Adds the sign-in routes (public) to the console's app. */
export function mountSignIn(app: Hono, s: SignInSettings): void {
  const { base, db } = s;
  const origin = (c: Context) => publicOrigin(s.env, c.req.raw);
  const clientOf = clientAddress(s.env);
  const oauth = (c: Context): OAuthConfig => ({
    clients: oauthClients(s.env, origin(c)),
    stateSecret: s.stateSecret,
    stateCookieName: "__Host-console-oauth",
    redirectUri: (p) => `${origin(c)}${base}/api/auth/oauth/${p}/callback`,
  });
  const providers = configuredProviders({
    clients: oauthClients(s.env, "http://localhost"),
    stateSecret: "-",
    redirectUri: () => "",
  });
  const onEvent = authEventStore(db);
  const rightful = (email: string, isAdmin: boolean) => isAdmin || isOwner(s.owners, email);
  const refuse = (c: Context) => c.html(refusedPage(base), 403, { "cache-control": "no-store" });

  /**
   * Makes the session (bound to the user's stamp), writes the sign-in to the log and only then
   * gives the cookie: a sign-in the log cannot record does not happen.
   */
  const signedIn = async (
    c: Context,
    user: { id: string; email: string },
    method: string,
  ): Promise<"ok" | "no_session" | "unrecorded"> => {
    const r = await createUserSession(db, { session: s.session, userId: user.id });
    if (!r.ok) return "no_session";
    const logged = await recordAudit(db, {
      actorId: user.id,
      actorEmail: user.email,
      action: "console.sign_in",
      target: `user:${user.id}`,
      after: { method },
    });
    if (!logged.ok) {
      console.error(`console: the audit log cannot be written (${logged.error}); no sign-in`);
      return "unrecorded";
    }
    c.header("set-cookie", r.setCookie, { append: true });
    return "ok";
  };
  /** The answer to a sign-in the audit log could not record: 503, in words, no session. */
  const unrecorded = (c: Context, email = "") => {
    c.header("cache-control", "no-store");
    if (!wantsHtml(c)) return c.json({ error: "unavailable" }, 503);
    const q = new URLSearchParams({ error: "unavailable" });
    if (email) q.set("email", email);
    return c.redirect(`${base}/login?${q}`, 303);
  };

  /** A provider- or broker-verified e-mail: an existing administrator, or an owner. */
  const admitVerified = async (
    c: Context,
    who: { email: string; provider: string; providerUserId?: string },
    method: string,
  ): Promise<Response> => {
    const found = await getUserByEmail(db, who.email);
    const known = found.ok ? found.user : null;
    if (!rightful(who.email, known?.isAdmin ?? false)) return refuse(c);
    let userId = known?.id ?? null;
    if (who.providerUserId) {
      const linked = await findOrCreateOAuthUser(db, {
        provider: who.provider,
        providerUserId: who.providerUserId,
        email: who.email,
        emailVerified: true,
        client: clientOf(c.req.raw, c.env as ConnectionInfo | undefined),
        onEvent,
      });
      if (!linked.ok) {
        return c.redirect(`${base}/login?oauth_error=${encodeURIComponent(linked.error)}`, 302);
      }
      userId = linked.userId;
    }
    if (!userId) return refuse(c);
    const user = await getUserByEmail(db, who.email);
    if (!user.ok || !rightful(user.user.email, user.user.isAdmin)) return refuse(c);
    const done = await signedIn(c, user.user, method);
    if (done === "unrecorded") return unrecorded(c);
    if (done !== "ok") return refuse(c);
    c.header("cache-control", "no-store");
    return c.redirect(`${base}/`, 302);
  };

  const loginPage = (c: Context) =>
    renderPage(c, base, {
      page: "login",
      props: {
        action: `${base}/api/auth/login`,
        title: "Console sign-in",
        error: codeParam(c, "error") ?? codeParam(c, "oauth_error"),
        email: c.req.query("email"),
        next: safeNext(base, c.req.query("next")),
        notice: c.req.query("signed_out") ? "You are signed out of the console." : undefined,
        messages: {
          forbidden: "This account may not use the console.",
          unavailable:
            "The console cannot record sign-ins just now, so it signs no one in. Try again in a moment.",
        },
      },
      sso: providers.length
        ? s.sso === "relay"
          ? { providers, hrefTemplate: `${base}/api/auth/relay/start?provider={provider}` }
          : { providers, basePath: base }
        : undefined,
    });
  mountClientScript(app);
  app.get("/login", loginPage);
  app.get("/api/auth/login", (c) => c.redirect(`${base}/login`, 302));

  app.post("/api/auth/login", async (c) => {
    const body = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
    const email = typeof body.email === "string" ? body.email : "";
    const password = typeof body.password === "string" ? body.password : "";
    const next = safeNext(base, typeof body.next === "string" ? body.next : null);
    const r = await login(db, {
      email,
      password,
      client: clientOf(c.req.raw, c.env as ConnectionInfo | undefined),
      iterations: s.iterations,
    });
    const page = `${base}/login`;
    if (!r.ok) {
      if (r.retryAfter) c.header("retry-after", String(r.retryAfter));
      const status = r.error === "too_many_attempts"
        ? 429
        : r.error === "invalid_input"
        ? 400
        : 401;
      return answerError(c, r.error, status, page, { email });
    }
    const user = await getUserByEmail(db, email);
    if (!user.ok || !rightful(user.user.email, user.user.isAdmin)) {
      return wantsHtml(c) ? refuse(c) : answerError(c, "forbidden", 403, page, { email });
    }
    const done = await signedIn(c, user.user, "password");
    if (done === "unrecorded") return unrecorded(c, email);
    if (done !== "ok") return answerError(c, "invalid_credentials", 401, page, { email });
    return answerOk(c, next);
  });

  app.get("/api/auth/oauth/:provider/start", async (c) => {
    const provider = c.req.param("provider") as OAuthProvider;
    if (s.sso !== "direct" || !providers.includes(provider)) return c.notFound();
    return await startOAuth(oauth(c), provider);
  });

  app.get("/api/auth/oauth/:provider/callback", async (c) => {
    const provider = c.req.param("provider") as OAuthProvider;
    if (s.sso !== "direct" || !providers.includes(provider)) return c.notFound();
    const config = oauth(c);
    const result = await handleOAuthCallback(config, provider, c.req.raw);
    c.header("set-cookie", clearOAuthStateCookie(config), { append: true });
    if (!result.ok) {
      return c.redirect(`${base}/login?oauth_error=${encodeURIComponent(result.error)}`, 302);
    }
    if (!result.user.emailVerified) {
      return c.redirect(`${base}/login?oauth_error=email_unverified`, 302);
    }
    return await admitVerified(c, {
      email: result.user.email,
      provider,
      providerUserId: result.user.providerUserId,
    }, provider);
  });

  app.get("/api/auth/relay/start", async (c) => {
    if (s.sso !== "relay") return c.notFound();
    const nonce = crypto.randomUUID().replaceAll("-", "");
    const token = await signToken(s.session.secret, {
      purpose: NONCE_PURPOSE,
      payload: nonce,
      ttlSeconds: NONCE_TTL,
    });
    const target = new URL(`${origin(c)}${s.brokerPath}/start`);
    target.searchParams.set("site", s.relaySiteId);
    target.searchParams.set("return_to", `${origin(c)}${base}/api/auth/relay/callback`);
    target.searchParams.set("nonce", nonce);
    const provider = c.req.query("provider");
    if (provider) target.searchParams.set("provider", provider);
    c.header("set-cookie", cookie(NONCE_COOKIE, token, NONCE_TTL));
    c.header("cache-control", "no-store");
    return c.redirect(target.href, 302);
  });

  app.get("/api/auth/relay/callback", async (c) => {
    if (s.sso !== "relay") return c.notFound();
    c.header("set-cookie", cookie(NONCE_COOKIE, "", 0), { append: true });
    const oauthError = codeParam(c, "oauth_error");
    if (oauthError) return c.redirect(`${base}/login?oauth_error=${oauthError}`, 302);
    const kept = await keptNonce(c, s.session.secret);
    const claims = await verifyRelay(s.relaySecret, c.req.query("relay") ?? "");
    if (!claims || kept === null || claims.nonce !== kept) {
      return c.redirect(`${base}/login?oauth_error=relay_invalid`, 302);
    }
    return await admitVerified(c, {
      email: claims.email,
      provider: claims.provider,
      providerUserId: claims.providerUserId,
    }, `relay:${claims.provider}`);
  });
}

async function keptNonce(c: Context, secret: Secrets): Promise<string | null> {
  for (const part of (c.req.header("cookie") ?? "").split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name !== NONCE_COOKIE) continue;
    const claims = await verifyToken<string>(secret, rest.join("="), { purpose: NONCE_PURPOSE });
    if (claims && typeof claims.payload === "string") return claims.payload;
  }
  return null;
}
