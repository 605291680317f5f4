/**
 * The relay broker: a central site that runs OAuth with the providers once and relays the
 * verified identity to registered sites (see `relay_registry.ts`).
 *
 * 1. A site keeps a nonce (in its own signed cookie) and sends the browser to
 *    `GET /broker/start?site=<id>&return_to=<url>&nonce=<nonce>[&provider=<p>]`.
 * 2. The broker answers 400 (and redirects nowhere) unless the site is registered and
 *    `return_to` is one of its registered return URLs; it keeps the request in a signed,
 *    10-minute cookie and starts OAuth with the provider (asking which one when not given).
 * 3. On the provider's callback it signs `{email, provider, nonce, providerUserId}` with
 *    **that site's** relay secret (2-minute token) and redirects to the return URL with
 *    `?relay=<token>`; a failed sign-in goes back with `?oauth_error=<code>` instead.
 * 4. The site calls `verifyRelay` with its own secret and rejects a null result or a nonce
 *    other than the one it kept (see `relay_demo.ts`).
 *
 * Variables: `BROKER_SECRET` signs the broker's state and pending cookies (development
 * default; required in production); the provider credentials as for any site.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import {
  clearOAuthStateCookie,
  configuredProviders,
  handleOAuthCallback,
  type OAuthConfig,
  type OAuthProvider,
  signRelay,
  signToken,
  startOAuth,
  verifyToken,
} from "../mod.ts";
import { SsoButtons } from "../preact.ts";
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import type { AppEnv } from "./env.ts";
import { oauthClients } from "./dev_idp.ts";
import { siteSecret } from "./dev_secret.ts";
import { publicOrigin } from "./public_url.ts";
import {
  allowedReturnUrl,
  ensureRelayTables,
  findRelaySite,
  openAppDatabase,
} from "./relay_registry.ts";
import type { Client } from "@libsql/client";
import { cardPage, escapeHtml as esc } from "./html.ts";
import { providerName } from "./providers.ts";
import { sitePage } from "./site_page.ts";

/** Where the broker is mounted in the reference app. */
export const BROKER_PATH = "/broker";

const PENDING_COOKIE = "__Host-gh-broker-pending";
const STATE_COOKIE = "__Host-gh-broker-oauth";
const PENDING_PURPOSE = "broker-pending";
const PENDING_TTL = 600;
const NONCE = /^[A-Za-z0-9_-]{16,128}$/;

interface Pending {
  site: string;
  returnTo: string;
  nonce: string;
  provider: OAuthProvider;
}

/** Options of {@linkcode createBroker}. */
export interface BrokerOptions {
  /** The app's environment. */
  env: AppEnv;
  /** The registry database; default the app's database. */
  db?: Client;
  /** Mount path; default {@linkcode BROKER_PATH}. */
  basePath?: string;
  /** Clock in milliseconds, for tests; default `Date.now`. */
  now?: () => number;
}

/** The broker's routes (mount at `basePath`). */
export async function createBroker(options: BrokerOptions): Promise<Hono> {
  const { env } = options;
  const base = options.basePath ?? BROKER_PATH;
  const now = options.now ?? Date.now;
  const db = options.db ?? await openAppDatabase(env);
  await ensureRelayTables(db);
  const secret = siteSecret(env, "BROKER_SECRET");
  const app = new Hono();

  const origin = (c: Context) => publicOrigin(env, c.req.raw);
  const oauth = (c: Context): OAuthConfig => ({
    clients: oauthClients(env, origin(c)),
    stateSecret: secret,
    stateCookieName: STATE_COOKIE,
    redirectUri: (p) => `${origin(c)}${base}/api/auth/oauth/${p}/callback`,
  });
  const refuse = (c: Context, message: string) =>
    c.html(cardPage("Sign-in refused", `<p>${esc(message)}</p>`), 400, {
      "cache-control": "no-store",
    });

  app.on("GET", ["/", "/:slash{/?}"], (c) => { // `<base>` and `<base>/`
    const providers = configuredProviders(oauth(c));
    return c.html(sitePage({
      site: "Relay broker",
      home: `${base}/`,
      title: "Relay broker",
      lead: "Signs people in once with an identity provider and relays the verified identity " +
        "to the sites registered with it.",
      body: h(
        "div",
        { class: "card" },
        h("h2", null, "Identity providers"),
        providers.length
          ? h("ul", null, providers.map((p) => h("li", { key: p }, providerName(p))))
          : h("p", null, "None is configured yet: set a provider's client id and secret."),
        h(
          "p",
          { class: "muted" },
          "A registered site sends people to ",
          h("code", null, `${base}/start?site=<id>&return_to=<url>&nonce=<nonce>`),
          "; sites are registered in the operator's console (Relay sites).",
        ),
      ),
    }));
  });

  app.get("/start", async (c) => {
    const q = new URL(c.req.url).searchParams;
    const site = await findRelaySite(db, q.get("site") ?? "");
    if (!site) return refuse(c, "This site is not registered with the broker.");
    const returnTo = allowedReturnUrl(site, q.get("return_to") ?? "", origin(c));
    if (!returnTo) return refuse(c, "This return address is not registered for the site.");
    const nonce = q.get("nonce") ?? "";
    if (!NONCE.test(nonce)) return refuse(c, "The sign-in request is incomplete.");
    const config = oauth(c);
    const providers = configuredProviders(config);
    const provider = q.get("provider") ?? "";
    if (!providers.includes(provider as OAuthProvider)) {
      if (provider) return refuse(c, "That sign-in provider is not available.");
      const here = new URL(c.req.url);
      here.searchParams.delete("provider");
      return c.html(cardPage(
        `Sign in to ${site.name}`,
        renderToString(h(SsoButtons, {
          providers,
          hrefTemplate: `${base}/start${here.search}&provider={provider}`,
        })),
      ));
    }
    const pending: Pending = {
      site: site.id,
      returnTo,
      nonce,
      provider: provider as OAuthProvider,
    };
    const token = await signToken(secret, {
      purpose: PENDING_PURPOSE,
      payload: pending,
      ttlSeconds: PENDING_TTL,
      now: now(),
    });
    const response = await startOAuth(config, pending.provider, { now: now() });
    response.headers.append(
      "set-cookie",
      `${PENDING_COOKIE}=${token}; ${cookieAttributes(PENDING_TTL)}`,
    );
    return response;
  });

  app.get("/api/auth/oauth/:provider/callback", async (c) => {
    const pending = await readPending(c.req.raw, secret, now());
    const clear = [clearOAuthStateCookie(oauth(c)), `${PENDING_COOKIE}=; ${cookieAttributes(0)}`];
    const provider = c.req.param("provider") as OAuthProvider;
    if (!pending || pending.provider !== provider) {
      return withCookies(
        refuse(c, "This sign-in expired or did not start here. Please start again."),
        clear,
      );
    }
    const site = await findRelaySite(db, pending.site);
    const returnTo = site && allowedReturnUrl(site, pending.returnTo, origin(c));
    if (!site || !returnTo) {
      return withCookies(refuse(c, "This site is no longer registered with the broker."), clear);
    }
    const back = new URL(returnTo);
    const result = await handleOAuthCallback(oauth(c), provider, c.req.raw, { now: now() });
    if (!result.ok) {
      back.searchParams.set("oauth_error", result.error);
    } else {
      back.searchParams.set(
        "relay",
        await signRelay(site.secret, {
          email: result.user.email,
          provider: result.user.provider,
          nonce: pending.nonce,
          providerUserId: result.user.providerUserId,
        }, { now: now() }),
      );
    }
    return withCookies(
      new Response(null, {
        status: 302,
        headers: { location: back.href, "cache-control": "no-store" },
      }),
      clear,
    );
  });

  return app;
}

async function readPending(request: Request, secret: string, now: number): Promise<Pending | null> {
  const cookies = request.headers.get("cookie") ?? "";
  for (const part of cookies.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name !== PENDING_COOKIE) continue;
    const claims = await verifyToken<Pending>(secret, rest.join("="), {
      purpose: PENDING_PURPOSE,
      now,
    });
    const p = claims?.payload;
    if (
      p && typeof p.site === "string" && typeof p.returnTo === "string" &&
      typeof p.nonce === "string"
    ) {
      return p;
    }
  }
  return null;
}

function withCookies(response: Response, cookies: string[]): Response {
  const out = new Response(response.body, response);
  for (const cookie of cookies) out.headers.append("set-cookie", cookie);
  return out;
}

function cookieAttributes(maxAge: number): string {
  return `HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${maxAge}`;
}
