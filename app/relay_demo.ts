/**
 * A demo site that signs people in through the relay broker instead of talking to providers
 * itself: it has no OAuth clients, only its own `RELAY_SECRET`, and registers itself with the
 * broker at start (id `relay-demo`, return URL `<mount>/api/auth/relay/callback`).
 *
 * Routes (relative to the mount path):
 * - `GET /` protected page; without a session 302 to `/api/auth/login`.
 * - `(any) /api/auth/login` 302 to `/login`; `GET /login` the sign-in page (SSO buttons).
 * - `GET /api/auth/relay/start?provider=` keeps a fresh nonce in a signed cookie and sends the
 *   browser to the broker.
 * - `GET /api/auth/relay/callback?relay=` verifies the token with this site's secret, rejects a
 *   null result or another nonce (302 to `/login?oauth_error=relay_invalid`), answers 403
 *   `forbidden` when the e-mail is not allowed (a page saying so, with a way back, for a
 *   browser), else issues the session.
 * - `POST /api/auth/logout` ends the session, in every copy of its cookie: its id goes to the
 *   app database's `revoked_sessions` (the toolkit's table), which every read checks.
 *
 * Variables: `RELAY_DEMO_SESSION_SECRET`, `RELAY_DEMO_RELAY_SECRET` (development defaults),
 * `RELAY_DEMO_ACCESS_MODE` (default `public`), `RELAY_DEMO_OWNER_EMAILS`,
 * `RELAY_DEMO_ACCESS_DOMAINS`.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { Client } from "@libsql/client";
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import {
  clearSessionCookie,
  createSessionCookie,
  emailAllowed,
  parseAccessMode,
  readSession,
  type RevocationStore,
  revokeSession,
  type SessionConfig,
  signToken,
  verifyRelay,
  verifyToken,
} from "../mod.ts";
import { describeError, SsoButtons, styleFor } from "../preact.ts";
import { BROKER_PATH } from "./broker.ts";
import { oauthClients } from "./dev_idp.ts";
import { siteSecret } from "./dev_secret.ts";
import { publicOrigin } from "./public_url.ts";
import type { AppEnv } from "./env.ts";
import { ensureRelayTables, openAppDatabase, registerRelaySite } from "./relay_registry.ts";
import { openAppDatabase as openToolkitDatabase } from "./database.ts";
import { revocationStore } from "../d1.ts";
import { cardPage, escapeHtml as esc } from "./html.ts";
import { forbiddenResponse } from "./site_page.ts";

/** The demo site's id at the broker. */
export const RELAY_DEMO_ID = "relay-demo";
/** Where the demo site is mounted in the reference app. */
export const RELAY_DEMO_PATH = "/relay-demo";

const NONCE_PURPOSE = "relay-nonce";
const NONCE_TTL = 600;

/** Options of {@linkcode createRelayDemo}. */
export interface RelayDemoOptions {
  /** The app's environment. */
  env: AppEnv;
  /** The broker's registry database; default the app's database. */
  db?: Client;
  /** Mount path; default {@linkcode RELAY_DEMO_PATH}. */
  basePath?: string;
  /** Site id at the broker; default {@linkcode RELAY_DEMO_ID}. */
  siteId?: string;
  /** Prefix of this site's variables; default `RELAY_DEMO_`. */
  varPrefix?: string;
  /** Where the broker is mounted; default {@linkcode BROKER_PATH}. */
  brokerPath?: string;
  /** Clock in milliseconds, for tests; default `Date.now`. */
  now?: () => number;
}

/** The demo site's routes; registers the site with the broker's registry. */
export async function createRelayDemo(options: RelayDemoOptions): Promise<Hono> {
  const { env } = options;
  const base = options.basePath ?? RELAY_DEMO_PATH;
  const siteId = options.siteId ?? RELAY_DEMO_ID;
  const prefix = options.varPrefix ?? "RELAY_DEMO_";
  const broker = options.brokerPath ?? BROKER_PATH;
  const now = options.now ?? Date.now;
  const db = options.db ?? await openAppDatabase(env);
  await ensureRelayTables(db);
  const relaySecret = siteSecret(env, `${prefix}RELAY_SECRET`);
  const sessionSecret = siteSecret(env, `${prefix}SESSION_SECRET`);
  const session: SessionConfig = {
    secret: sessionSecret,
    cookieName: `__Host-gh-${siteId}`,
  };
  const nonceCookie = `__Host-gh-${siteId}-nonce`;
  const mode = parseAccessMode(env.vars[`${prefix}ACCESS_MODE`] ?? "public");
  const owners = env.vars[`${prefix}OWNER_EMAILS`] ?? "";
  const domains = env.vars[`${prefix}ACCESS_DOMAINS`] ?? "";
  const callbackPath = `${base}/api/auth/relay/callback`;
  await registerRelaySite(db, {
    id: siteId,
    name: "Relay demo",
    secret: relaySecret,
    // A path: on the broker's public origin (APP_URL / APP_HOSTS), never the Host header.
    returnUrls: [callbackPath],
  });

  const origin = (c: Context) => publicOrigin(env, c.req.raw);
  const app = new Hono();
  // A sign-out ends the session in every copy of its cookie; other sessions go on. Ended
  // sessions are kept in the toolkit's `revoked_sessions` table of the app's database
  // (`DATABASE_URL`), opened at the first use (again after a failed open).
  let toolkitDb: ReturnType<typeof openToolkitDatabase> | null = null;
  const store = () => {
    toolkitDb ??= openToolkitDatabase(env).catch((e) => {
      toolkitDb = null;
      throw e;
    });
    return toolkitDb.then(revocationStore);
  };
  const revoked: RevocationStore = {
    revoke: async (id, expiresAt) => await (await store()).revoke(id, expiresAt),
    isRevoked: async (id, s) => await (await store()).isRevoked(id, s),
  };

  const home = async (c: Context): Promise<Response> => {
    const who = await readSession(session, c.req.raw, { now: now(), revoked });
    if (!who) return c.redirect(`${base}/api/auth/login`, 302);
    return c.html(cardPage(
      "Relay demo",
      `<p>Signed in as <strong>${esc(who.subject)}</strong> through the relay broker.</p>` +
        `<form method="post" action="${base}/api/auth/logout"><button type="submit" ` +
        `style="${css(styleFor(undefined, "button"))}">Sign out</button></form>`,
    ));
  };
  app.get("/", home);
  app.get("/:slash{/?}", home); // `<base>/` as well as `<base>`

  app.all("/api/auth/login", (c) => c.redirect(`${base}/login`, 302));

  app.get("/login", (c) => {
    const error = c.req.query("oauth_error");
    const providers = Object.keys(oauthClients(env, origin(c)));
    const body = renderToString(h("div", null, [
      error
        ? h(
          "div",
          { role: "alert", "aria-live": "assertive" },
          h("p", { style: styleFor(undefined, "error") }, describeError(error)),
        )
        : h("div", { role: "alert", "aria-live": "assertive" }),
      providers.length
        ? h(SsoButtons, {
          providers,
          hrefTemplate: `${base}/api/auth/relay/start?provider={provider}`,
        })
        : h("p", null, "No sign-in provider is configured at the broker."),
    ]));
    return c.html(cardPage("Sign in to the relay demo", body), 200, {
      "cache-control": "no-store",
    });
  });

  app.get("/api/auth/relay/start", async (c) => {
    const nonce = randomNonce();
    const token = await signToken(sessionSecret, {
      purpose: NONCE_PURPOSE,
      payload: nonce,
      ttlSeconds: NONCE_TTL,
      now: now(),
    });
    const target = new URL(`${origin(c)}${broker}/start`);
    target.searchParams.set("site", siteId);
    target.searchParams.set("return_to", origin(c) + callbackPath);
    target.searchParams.set("nonce", nonce);
    const provider = c.req.query("provider");
    if (provider) target.searchParams.set("provider", provider);
    return new Response(null, {
      status: 302,
      headers: {
        location: target.href,
        "set-cookie": `${nonceCookie}=${token}; ${attributes(NONCE_TTL)}`,
        "cache-control": "no-store",
      },
    });
  });

  app.get("/api/auth/relay/callback", async (c) => {
    const clearNonce = `${nonceCookie}=; ${attributes(0)}`;
    const fail = (code: string) =>
      new Response(null, {
        status: 302,
        headers: {
          location: `${base}/login?oauth_error=${encodeURIComponent(code)}`,
          "set-cookie": clearNonce,
        },
      });
    const oauthError = c.req.query("oauth_error");
    if (oauthError) return fail(oauthError);
    const kept = await keptNonce(c.req.raw, nonceCookie, sessionSecret, now());
    const claims = await verifyRelay(relaySecret, c.req.query("relay") ?? "", { now: now() });
    if (!claims || kept === null || !sameText(claims.nonce, kept)) return fail("relay_invalid");
    if (!emailAllowed({ mode, email: claims.email, owners, domains })) {
      return forbiddenResponse(c, {
        site: "Relay demo",
        home: base,
        signIn: `${base}/login`,
        email: claims.email,
      }, { "set-cookie": clearNonce });
    }
    const headers = new Headers({ location: base, "cache-control": "no-store" });
    headers.append("set-cookie", clearNonce);
    headers.append("set-cookie", await createSessionCookie(session, claims.email, { now: now() }));
    return new Response(null, { status: 302, headers });
  });

  // The cookie goes from this browser even when the database fails; the page then says so.
  app.post("/api/auth/logout", async (c) => {
    const ended = await revokeSession(session, c.req.raw, revoked, { now: now() })
      .then(() => true, () => false);
    const location = `${base}/login${ended ? "" : "?oauth_error=db_error"}`;
    return new Response(null, {
      status: 302,
      headers: { location, "set-cookie": clearSessionCookie(session) },
    });
  });

  return app;
}

async function keptNonce(
  request: Request,
  name: string,
  secret: string,
  now: number,
): Promise<string | null> {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key !== name) continue;
    const claims = await verifyToken<string>(secret, rest.join("="), {
      purpose: NONCE_PURPOSE,
      now,
    });
    if (claims && typeof claims.payload === "string") return claims.payload;
  }
  return null;
}

/** Constant-time comparison of two strings. */
function sameText(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

function attributes(maxAge: number): string {
  return `HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${maxAge}`;
}

function css(style: Record<string, string | number>): string {
  return Object.entries(style).map(([k, v]) =>
    `${k.replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}:${v}`
  )
    .join(";");
}
