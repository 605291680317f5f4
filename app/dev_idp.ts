/**
 * A local development identity provider built into the reference app, so `deno task start`
 * gives a working "Continue with Google/GitHub/Microsoft" with no accounts anywhere.
 *
 * It speaks the shapes of the real endpoints, one tree per provider under `/dev-idp/<provider>`,
 * which is what the core's `baseUrl` client option points at:
 * - google: `GET /o/oauth2/v2/auth`, `POST /token`, `GET /v1/userinfo`
 * - github: `GET /login/oauth/authorize`, `POST /login/oauth/access_token`, `GET /user`,
 *   `GET /user/emails`
 * - microsoft: `GET /{tenant}/oauth2/v2.0/authorize`, `POST /{tenant}/oauth2/v2.0/token` (with
 *   an ID token carrying `email` and `xms_edov`), `GET /oidc/userinfo`, `GET /v1.0/me`
 *
 * The consent page asks for any e-mail (nothing is checked: it is a development tool). Codes
 * are single-use, live 2 minutes, are bound to the client id and redirect URI and check the
 * PKCE S256 verifier, like the real providers.
 *
 * It is on only when the app runs in development mode and no real provider credentials
 * (`GOOGLE_CLIENT_ID`, `GITHUB_CLIENT_ID`, `MICROSOFT_CLIENT_ID`) are set; `DEV_IDP=off`
 * turns it off. In production the app refuses to start when `DEV_IDP=on` asks for it.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { OAuthClient, OAuthProvider } from "../mod.ts";
import type { AppEnv } from "./env.ts";
import { h } from "preact";
import { providerName } from "./providers.ts";
import { sitePage } from "./site_page.ts";

/** Path the development identity provider is mounted at. */
export const DEV_IDP_PATH = "/dev-idp";
/** Client id every site uses with the development provider. */
export const DEV_CLIENT_ID = "gatehouse-dev-client";
/** Client secret every site uses with the development provider (not a secret). */
export const DEV_CLIENT_SECRET = "gatehouse-dev-secret";

const PROVIDERS: readonly OAuthProvider[] = ["google", "github", "microsoft"];
const CODE_TTL_MS = 120_000;
const TOKEN_TTL_MS = 3_600_000;

/** Thrown at start when production would run with the development provider. */
export class DevIdpError extends Error {
  /** Stable code. */
  readonly code = "dev_idp_in_production";
  constructor() {
    super("DEV_IDP=on is refused in production: configure real provider credentials");
    this.name = "DevIdpError";
  }
}

/** True when some real provider credentials are set. */
function hasRealCredentials(env: AppEnv): boolean {
  return PROVIDERS.some((p) => Boolean(env.vars[`${p.toUpperCase()}_CLIENT_ID`]));
}

/**
 * Whether the development provider is on for this environment; throws {@linkcode DevIdpError}
 * when production asks for it.
 */
export function devIdpEnabled(env: AppEnv): boolean {
  const flag = env.vars.DEV_IDP;
  if (env.MODE === "production") {
    if (flag === "on" || flag === "1" || flag === "true") throw new DevIdpError();
    return false;
  }
  if (flag === "off" || flag === "0" || flag === "false") return false;
  return !hasRealCredentials(env);
}

/**
 * The OAuth clients a site of the app uses: the real ones from `<PROVIDER>_CLIENT_ID` /
 * `<PROVIDER>_CLIENT_SECRET` (and `MICROSOFT_TENANT_ID`), or, when the development provider is
 * on, all three pointing at it on `origin` (the app's own origin, e.g. `http://127.0.0.1:8000`).
 */
export function oauthClients(
  env: AppEnv,
  origin: string,
): Partial<Record<OAuthProvider, OAuthClient>> {
  const clients: Partial<Record<OAuthProvider, OAuthClient>> = {};
  if (devIdpEnabled(env)) {
    for (const p of PROVIDERS) {
      clients[p] = {
        clientId: DEV_CLIENT_ID,
        clientSecret: DEV_CLIENT_SECRET,
        baseUrl: `${origin}${DEV_IDP_PATH}/${p}`,
      };
    }
    return clients;
  }
  for (const p of PROVIDERS) {
    const id = env.vars[`${p.toUpperCase()}_CLIENT_ID`];
    const secret = env.vars[`${p.toUpperCase()}_CLIENT_SECRET`];
    if (!id || !secret) continue;
    clients[p] = { clientId: id, clientSecret: secret };
    if (p === "microsoft" && env.vars.MICROSOFT_TENANT_ID) {
      clients[p]!.tenantId = env.vars.MICROSOFT_TENANT_ID;
    }
  }
  return clients;
}

interface Person {
  email: string;
  name: string;
  verified: boolean;
}

interface Grant extends Person {
  provider: OAuthProvider;
  clientId: string;
  redirectUri: string;
  challenge: string | null;
  expires: number;
}

/** The development provider's routes (mount at {@linkcode DEV_IDP_PATH}). */
export function createDevIdp(options: { now?: () => number } = {}): Hono {
  const now = options.now ?? Date.now;
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, Grant>();
  const app = new Hono();

  function sweep(): void {
    const t = now();
    for (const [k, g] of codes) if (g.expires < t) codes.delete(k);
    for (const [k, g] of tokens) if (g.expires < t) tokens.delete(k);
  }

  function authorize(provider: OAuthProvider) {
    return (c: Context): Response => {
      const q = new URL(c.req.url).searchParams;
      const redirectUri = q.get("redirect_uri") ?? "";
      const problem = q.get("client_id") !== DEV_CLIENT_ID
        ? "unknown client_id"
        : !/^https?:\/\//.test(redirectUri)
        ? "redirect_uri must be an absolute http(s) URL"
        : q.get("response_type") !== "code"
        ? "response_type must be code"
        : null;
      if (problem) {
        return c.html(
          devPage({
            title: "Development sign-in",
            error: `The sign-in request is wrong: ${problem}.`,
            body: null,
          }),
          400,
        );
      }
      const hidden = [
        "client_id",
        "redirect_uri",
        "state",
        "code_challenge",
        "code_challenge_method",
      ].map((k) => h("input", { key: k, type: "hidden", name: k, value: q.get(k) ?? "" }));
      const label = providerName(provider);
      return c.html(devPage({
        title: `Sign in with ${label}`,
        lead: `The app's development identity provider, standing in for ${label}. Type any ` +
          "e-mail: it is accepted as verified.",
        body: h(
          "form",
          { method: "post", class: "stack card" },
          hidden,
          h(
            "div",
            { class: "field" },
            h("label", { for: "email" }, "E-mail"),
            h("input", {
              id: "email",
              name: "email",
              type: "email",
              autocomplete: "email",
              required: true,
            }),
          ),
          h(
            "div",
            { class: "field" },
            h("label", { for: "name" }, "Name (optional)"),
            h("input", { id: "name", name: "name", type: "text", autocomplete: "name" }),
          ),
          h(
            "label",
            { class: "check" },
            h("input", { type: "checkbox", name: "verified", value: "1", checked: true }),
            "E-mail verified",
          ),
          h(
            "div",
            { class: "actions" },
            h("button", { type: "submit", name: "decision", value: "allow" }, "Continue"),
            h("button", {
              type: "submit",
              name: "decision",
              value: "deny",
              formnovalidate: true,
              class: "secondary",
            }, "Cancel"),
          ),
        ),
      }));
    };
  }

  function consent(provider: OAuthProvider) {
    return async (c: Context): Promise<Response> => {
      sweep();
      const form = await c.req.formData();
      const get = (k: string) => String(form.get(k) ?? "");
      const redirectUri = get("redirect_uri");
      if (get("client_id") !== DEV_CLIENT_ID || !/^https?:\/\//.test(redirectUri)) {
        return c.html(
          devPage({
            title: "Development sign-in",
            error: "The sign-in request is wrong.",
            body: null,
          }),
          400,
        );
      }
      const back = new URL(redirectUri);
      if (get("state")) back.searchParams.set("state", get("state"));
      if (get("decision") === "deny") {
        back.searchParams.set("error", "access_denied");
        return c.redirect(back.href, 302);
      }
      const email = get("email").trim();
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
        return c.html(
          devPage({
            title: "Development sign-in",
            error: "An e-mail address is needed: go back and type one.",
            body: null,
          }),
          400,
        );
      }
      const code = randomId();
      codes.set(code, {
        provider,
        email,
        name: get("name").trim() || email.split("@")[0],
        verified: get("verified") === "1",
        clientId: DEV_CLIENT_ID,
        redirectUri,
        challenge: get("code_challenge_method") === "S256" && get("code_challenge")
          ? get("code_challenge")
          : null,
        expires: now() + CODE_TTL_MS,
      });
      back.searchParams.set("code", code);
      return c.redirect(back.href, 302);
    };
  }

  const token = async (c: Context): Promise<Response> => {
    sweep();
    const form = await c.req.formData();
    const get = (k: string) => String(form.get(k) ?? "");
    const code = get("code");
    const grant = codes.get(code);
    codes.delete(code); // single use, even when the rest fails
    const fail = (error: string) => c.json({ error }, 400);
    if (get("grant_type") !== "authorization_code") return fail("unsupported_grant_type");
    if (get("client_id") !== DEV_CLIENT_ID || get("client_secret") !== DEV_CLIENT_SECRET) {
      return c.json({ error: "invalid_client" }, 401);
    }
    if (!grant || grant.expires < now() || grant.redirectUri !== get("redirect_uri")) {
      return fail("invalid_grant");
    }
    if (grant.challenge && (await s256(get("code_verifier"))) !== grant.challenge) {
      return fail("invalid_grant");
    }
    const accessToken = randomId();
    tokens.set(accessToken, { ...grant, expires: now() + TOKEN_TTL_MS });
    const body: Record<string, unknown> = {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: TOKEN_TTL_MS / 1000,
      scope: "openid email profile",
    };
    if (grant.provider === "microsoft") body.id_token = await microsoftIdToken(grant, now());
    return c.json(body);
  };

  function bearer(c: Context): Grant | null {
    const m = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "");
    const grant = m ? tokens.get(m[1]) : undefined;
    return grant && grant.expires >= now() ? grant : null;
  }

  function withUser(fn: (c: Context, g: Grant, id: string) => Response) {
    return async (c: Context): Promise<Response> => {
      const grant = bearer(c);
      if (!grant) return c.json({ error: "invalid_token" }, 401);
      return fn(c, grant, await userId(grant.email));
    };
  }

  // Google
  app.get("/google/o/oauth2/v2/auth", authorize("google"));
  app.post("/google/o/oauth2/v2/auth", consent("google"));
  app.post("/google/token", token);
  app.get(
    "/google/v1/userinfo",
    withUser((c, g, id) =>
      c.json({ sub: id, email: g.email, email_verified: g.verified, name: g.name })
    ),
  );
  // GitHub: the public e-mail stays null, so clients use the e-mails list like for most users.
  app.get("/github/login/oauth/authorize", authorize("github"));
  app.post("/github/login/oauth/authorize", consent("github"));
  app.post("/github/login/oauth/access_token", token);
  app.get(
    "/github/user",
    withUser((c, g, id) =>
      c.json({
        id: Number.parseInt(id.slice(0, 8), 16),
        login: g.email.split("@")[0],
        name: g.name,
        email: null,
      })
    ),
  );
  app.get(
    "/github/user/emails",
    withUser((c, g) =>
      c.json([{ email: g.email, primary: true, verified: g.verified, visibility: "private" }])
    ),
  );
  // Microsoft
  app.get("/microsoft/:tenant/oauth2/v2.0/authorize", authorize("microsoft"));
  app.post("/microsoft/:tenant/oauth2/v2.0/authorize", consent("microsoft"));
  app.post("/microsoft/:tenant/oauth2/v2.0/token", token);
  app.get(
    "/microsoft/oidc/userinfo",
    withUser((c, g, id) =>
      c.json(g.verified ? { sub: id, email: g.email, name: g.name } : { sub: id, name: g.name })
    ),
  );
  app.get(
    "/microsoft/v1.0/me",
    withUser((c, g, id) =>
      c.json({ id, displayName: g.name, mail: g.email, userPrincipalName: g.email })
    ),
  );
  app.on("GET", ["/", "/:slash{/?}"], (c) =>
    c.html(devPage({
      title: "Development identity provider",
      lead: "Stands in for Google, GitHub and Microsoft while the app runs in development mode " +
        "without real credentials.",
      body: h(
        "div",
        { class: "card" },
        h(
          "p",
          null,
          'A site\'s "Continue with ..." button leads here: type any e-mail and the site signs ' +
            "you in with it. Nothing leaves this machine.",
        ),
        h(
          "p",
          { class: "muted" },
          "On only in development mode, without real provider credentials; DEV_IDP=off turns " +
            "it off.",
        ),
      ),
    })));
  return app;
}

/** The development tenant's id (the `tid` of its ID tokens). */
const DEV_TENANT_ID = "00000000-0000-4000-8000-00000000de70";

/**
 * Microsoft's ID token for a grant, unsigned (the client reads it as received from the token
 * endpoint): `email` and `xms_edov` (true when the consent page's box was ticked), as an app
 * registration with those optional claims gets.
 */
async function microsoftIdToken(grant: Grant, at: number): Promise<string> {
  const part = (v: unknown) =>
    btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(v))))
      .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const seconds = Math.floor(at / 1000);
  const claims = {
    ver: "2.0",
    iss: `https://login.microsoftonline.com/${DEV_TENANT_ID}/v2.0`,
    aud: grant.clientId,
    sub: await userId(grant.email),
    tid: DEV_TENANT_ID,
    iat: seconds,
    nbf: seconds,
    exp: seconds + TOKEN_TTL_MS / 1000,
    name: grant.name,
    email: grant.email,
    xms_edov: grant.verified,
  };
  return `${part({ typ: "JWT", alg: "none" })}.${part(claims)}.`;
}

/** A page of the development identity provider, in the app's look. */
function devPage(o: { title: string; lead?: string; error?: string; body: unknown }): string {
  return sitePage({
    site: "Development identity provider",
    home: "/dev-idp/",
    title: o.title,
    lead: o.lead,
    error: o.error,
    body: o.body as never,
  });
}

function randomId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

async function s256(verifier: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)),
  );
  return btoa(String.fromCharCode(...digest)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

async function userId(email: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(email.toLowerCase())),
  );
  return [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The site entry's factory: the provider's routes when it is on, else no routes (throws
 * {@linkcode DevIdpError} in production when `DEV_IDP=on`, so the app refuses to start).
 */
export function devIdpSite(env: AppEnv): Hono {
  return devIdpEnabled(env) ? createDevIdp() : new Hono();
}
