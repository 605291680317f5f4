/**
 * The owner-only demo site (mounted at `/owner`): the core's usage pattern for a site only its
 * owner may use. The owner signs in with a password (hash from `OWNER_PASSWORD_HASH`) or with a
 * configured OAuth provider; an e-mail that fails the allowlist (`ACCESS_MODE`, `OWNER_EMAILS`,
 * `ACCESS_DOMAINS`) gets 403 `forbidden` (a page saying so, with a way back, for a browser).
 * Server-rendered HTML in the sign-in pages' look, dates in words.
 *
 * Routes (relative to the mount path): `GET /` (protected page), `GET /login` and
 * `GET|POST /api/auth/login` (sign-in form and its action), `POST /logout` (ends the session
 * in every copy of its cookie: its id goes to the app database's `revoked_sessions`),
 * `GET /api/auth/oauth/{provider}/start|callback`.
 *
 * Development defaults (refused when `MODE=production`): password `owner-password` for
 * `owner@example.com`, and fixed session/state secrets. OAuth clients come from
 * `<PROVIDER>_CLIENT_ID`/`_SECRET` (`MICROSOFT_TENANT_ID`; `<PROVIDER>_BASE_URL` overrides the
 * provider's endpoints' origin), or in development from the app's built-in identity provider.
 *
 * Cross-site posts never reach these routes: the app refuses them for every site
 * (`app/middleware/cross_site.ts`). *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import {
  clearOAuthStateCookie,
  clearSessionCookie,
  configuredProviders,
  createSessionCookie,
  emailAllowed,
  handleOAuthCallback,
  type OAuthClient,
  type OAuthConfig,
  type OAuthProvider,
  parseAccessMode,
  readSession,
  type RevocationStore,
  revokeSession,
  type SessionConfig,
  startOAuth,
  verifyPassword,
} from "../mod.ts";
import { checkPasswordThrottled, type D1Database, migrate, revocationStore } from "../d1.ts";
import type { AppEnv } from "./env.ts";
import { openAppDatabase } from "./database.ts";
import { clientAddress, type ConnectionInfo } from "./client_address.ts";
import { oauthClients } from "./dev_idp.ts";
import { publicOrigin } from "./public_url.ts";
import { codeParam, mountClientScript, renderPage } from "./auth_pages.ts";
import { h } from "preact";
import { forbiddenResponse, sitePageResponse } from "./site_page.ts";
import { When } from "./console/ui.ts";
import { fullDate } from "./dates.ts";

/** The documented local default owner password (refused in production). */
export const DEV_OWNER_PASSWORD = "owner-password";
/** The documented local default owner e-mail. */
export const DEV_OWNER_EMAIL = "owner@example.com";
/** `hashPassword(DEV_OWNER_PASSWORD)` at the default 600,000 iterations. */
export const DEV_OWNER_PASSWORD_HASH =
  "$pbkdf2-sha256$i=600000,c=100000$Aw6dHbLP+Q9bo+AIE8uTtA$mnCg2cID+NblWC5U9CbvGIh37JENdXGqUQNSCpH+/MY";
const DEV_SECRET = "development-only-owner-site-secret-do-not-use-in-production";

/** Everything the owner site reads from the environment, parsed once. */
interface OwnerSettings {
  session: SessionConfig;
  passwordHash: string;
  owners: string;
  mode: ReturnType<typeof parseAccessMode>;
  domains: string;
  stateSecret: string;
}

function settings(env: AppEnv): OwnerSettings {
  const v = env.vars;
  const production = env.MODE === "production";
  const required = (name: string, devDefault: string): string => {
    const value = v[name];
    if (value && !(production && value === devDefault)) return value;
    if (production) throw new Error(`owner site: ${name} must be set in production`);
    return devDefault;
  };
  const hasOAuth = ["GOOGLE", "GITHUB", "MICROSOFT"].some((P) => v[`${P}_CLIENT_ID`]);
  return {
    session: {
      secret: required("SESSION_SECRET", DEV_SECRET),
      cookieName: "__Host-owner-session",
    },
    passwordHash: required("OWNER_PASSWORD_HASH", DEV_OWNER_PASSWORD_HASH),
    owners: v.OWNER_EMAILS ?? (production ? "" : DEV_OWNER_EMAIL),
    mode: parseAccessMode(v.ACCESS_MODE),
    domains: v.ACCESS_DOMAINS ?? "",
    stateSecret: hasOAuth ? required("STATE_SECRET", `${DEV_SECRET}-state`) : `${DEV_SECRET}-state`,
  };
}

const ERRORS: Record<string, string> = {
  credentials: "Wrong e-mail or password.",
  too_many_attempts: "Too many wrong passwords from here. Wait a little, then try again.",
  invalid_state: "The sign-in expired or was tampered with. Please try again.",
  access_denied: "Sign-in was cancelled at the provider.",
  email_unverified: "The provider has no verified e-mail for this account.",
};

/** Options of {@linkcode createOwnerSite}. */
export interface OwnerSiteOptions {
  /**
   * Count password tries and keep ended sessions in this database instead of opening
   * `DATABASE_URL` (tests).
   */
  db?: D1Database;
}

/**
 * The owner sessions' generation: a fingerprint of the owner password hash (never the hash),
 * so a new `OWNER_PASSWORD_HASH` ends every session issued before it.
 *
 * @example
 * ```ts
 * import { ownerSessionGeneration } from "./owner.ts";
 * console.log((await ownerSessionGeneration("$pbkdf2-sha256$...")).length); // 32
 * ```
 */
export async function ownerSessionGeneration(hash: string): Promise<string> {
  const data = new TextEncoder().encode(`gatehouse owner session generation\0${hash}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Builds the owner-only site (routes relative to its mount path `base`).
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { loadAppEnv } from "./env.ts";
 * import { createOwnerSite } from "./owner.ts";
 * const app = new Hono().route("/owner", createOwnerSite(loadAppEnv({})));
 * ```
 */
export function createOwnerSite(
  env: AppEnv,
  base = "/owner",
  options: OwnerSiteOptions = {},
): Hono {
  const s = settings(env);
  const app = new Hono();
  // Password tries are counted, and ended sessions kept, in the app's database (opened at the
  // first use).
  let database: Promise<D1Database> | null = null;
  const given = options.db;
  const db = () => (database ??= given ? migrate(given).then(() => given) : openAppDatabase(env));
  // A sign-out ends the session in every copy of its cookie; other sessions go on.
  const revoked: RevocationStore = {
    revoke: async (id, expiresAt) => await revocationStore(await db()).revoke(id, expiresAt),
    isRevoked: async (id, session) => await revocationStore(await db()).isRevoked(id, session),
  };
  const clientOf = clientAddress(env);
  // Sessions carry a generation derived from the owner password: a new OWNER_PASSWORD_HASH
  // ends every session issued before it (a leaked password's sessions with it).
  const generation = ownerSessionGeneration(s.passwordHash);
  const allowed = (email: string) =>
    emailAllowed({ mode: s.mode, email, owners: s.owners, domains: s.domains });
  const oauth = (c: Context): OAuthConfig => {
    const origin = publicOrigin(env, c.req.raw);
    const clients: Partial<Record<OAuthProvider, OAuthClient>> = oauthClients(env, origin);
    for (const [p, client] of Object.entries(clients)) {
      const baseUrl = env.vars[`${p.toUpperCase()}_BASE_URL`];
      if (baseUrl && client) client.baseUrl = baseUrl;
    }
    return {
      clients,
      stateSecret: s.stateSecret,
      stateCookieName: "__Host-owner-oauth",
      redirectUri: (p) => `${origin}${base}/api/auth/oauth/${p}/callback`,
    };
  };
  const forbidden = (c: Context, email?: string) =>
    forbiddenResponse(c, {
      site: "Owner-only site",
      home: `${base}/`,
      signIn: `${base}/login`,
      email,
    });
  const signIn = async (c: Context, email: string) => {
    const cookie = await createSessionCookie(s.session, email.trim().toLowerCase(), {
      generation: await generation,
    });
    c.header("set-cookie", cookie, { append: true });
    return c.redirect(`${base}/`, 302);
  };

  const home = async (c: Context) => {
    const session = await readSession(s.session, c.req.raw, {
      generation: await generation,
      revoked,
    });
    if (!session) return c.redirect(`${base}/api/auth/login`, 302);
    if (!allowed(session.subject)) return forbidden(c, session.subject);
    return sitePageResponse({
      site: "Owner-only site",
      home: `${base}/`,
      title: "Welcome back",
      who: session.subject,
      signOut: `${base}/logout`,
      body: h(
        "section",
        { class: "card", "aria-label": "Your session" },
        h("h2", null, "Your session"),
        h(
          "p",
          null,
          "You signed in ",
          h(When, { ms: session.issuedAt * 1000 }),
          ". The session ends ",
          h(When, { ms: session.expiresAt * 1000 }),
          ` (${fullDate(session.expiresAt * 1000)}), or when you sign out.`,
        ),
      ),
    });
  };
  app.get("/", home);
  app.get("/:slash{/?}", home); // `<base>/` as well as `<base>`

  // The sign-in page is LoginPage (react.ts), hydrated from `<base>/auth-client.js`; error
  // codes from `?oauth_error=` / `?error=` are shown in words, never echoed.
  const form = (c: Context, status: 200 | 401 | 429 = 200, error?: string) => {
    const providers = configuredProviders(oauth(c));
    return renderPage(c, base, {
      page: "login",
      props: {
        action: `${base}/api/auth/login`,
        title: "Owner sign-in",
        error: error ?? codeParam(c, "oauth_error") ?? codeParam(c, "error"),
        messages: { ...ERRORS, invalid_credentials: ERRORS.credentials },
      },
      sso: providers.length ? { providers, basePath: base } : undefined,
    }, status);
  };
  app.get("/login", (c) => form(c));
  app.get("/api/auth/login", (c) => form(c));
  mountClientScript(app);

  const login = async (c: Context) => {
    const body = await c.req.parseBody();
    const email = typeof body.email === "string" ? body.email.trim() : "";
    const password = typeof body.password === "string" ? body.password : "";
    const json = (c.req.header("accept") ?? "").includes("application/json");
    const checked = email
      ? await checkPasswordThrottled(await db(), {
        guards: "owner-site",
        client: clientOf(c.req.raw, c.env as ConnectionInfo | undefined),
        check: () => verifyPassword(password, s.passwordHash),
      })
      : null;
    if (checked && !checked.ok && checked.error === "too_many_attempts") {
      c.header("retry-after", String(checked.retryAfter ?? 1));
      return json
        ? c.json({ error: "too_many_attempts" }, 429)
        : await form(c, 429, "too_many_attempts");
    }
    if (!checked?.ok) {
      return json
        ? c.json({ error: "invalid_credentials" }, 401)
        : await form(c, 401, "credentials");
    }
    if (!allowed(email)) return forbidden(c, email);
    const redirect = await signIn(c, email);
    return json ? c.json({ ok: true, redirect: `${base}/` }) : redirect;
  };
  app.post("/login", login);
  app.post("/api/auth/login", login);

  // The cookie goes from this browser even when the database fails; the page then says so.
  app.post("/logout", async (c) => {
    const ended = await revokeSession(s.session, c.req.raw, revoked).then(() => true, () => false);
    c.header("set-cookie", clearSessionCookie(s.session));
    return c.redirect(`${base}/login${ended ? "" : "?error=db_error"}`, 302);
  });

  app.get("/api/auth/oauth/:provider/start", async (c) => {
    const provider = c.req.param("provider") as OAuthProvider;
    const config = oauth(c);
    if (!configuredProviders(config).includes(provider)) return c.text("not found", 404);
    return await startOAuth(config, provider);
  });

  app.get("/api/auth/oauth/:provider/callback", async (c) => {
    const provider = c.req.param("provider") as OAuthProvider;
    const config = oauth(c);
    if (!configuredProviders(config).includes(provider)) return c.text("not found", 404);
    const result = await handleOAuthCallback(config, provider, c.req.raw);
    c.header("set-cookie", clearOAuthStateCookie(config), { append: true });
    if (!result.ok) {
      return c.redirect(`${base}/login?oauth_error=${encodeURIComponent(result.error)}`, 302);
    }
    if (!allowed(result.user.email)) return forbidden(c, result.user.email);
    return await signIn(c, result.user.email);
  });

  return app;
}
