/**
 * OAuth sign-in over the three providers: which are configured, the start redirect (state and
 * PKCE S256 in a short-lived signed cookie bound to the provider), and the callback (state
 * checked in constant time, code exchanged, profile read, only provider-verified e-mails
 * succeed).
 *
 * @module
 */
import { AuthError } from "../_errors.ts";
import { COOKIE_NAME, cookieValues } from "../_cookie.ts";
import { b64urlEncode, randomBytes, timingSafeEqualText, utf8 } from "../_encoding.ts";
import { signToken, verifyToken } from "../token.ts";
import {
  bearerGet,
  fetchJson,
  type OAuthClient,
  type OAuthConfig,
  type OAuthEndpoints,
  type OAuthProvider,
  type OAuthUser,
  type ProviderSpec,
  record,
  text,
} from "./_provider.ts";
import { google } from "./google.ts";
import { github } from "./github.ts";
import { microsoft } from "./microsoft.ts";

export type {
  OAuthClient,
  OAuthConfig,
  OAuthEndpoints,
  OAuthProvider,
  OAuthUser,
} from "./_provider.ts";

/** The supported providers, in display order. */
export const OAUTH_PROVIDERS: readonly OAuthProvider[] = ["google", "github", "microsoft"];

const SPECS: Record<OAuthProvider, ProviderSpec> = { google, github, microsoft };

/** Lifetime of the OAuth state cookie: 10 minutes. */
export const OAUTH_STATE_TTL_SECONDS = 600;
const DEFAULT_STATE_COOKIE = "__Host-gatehouse-oauth";
const STATE_PURPOSE = "oauth-state";

/**
 * Why a callback failed:
 * - `not_configured`: unknown provider, or no client for it.
 * - `invalid_state`: state cookie missing, expired, forged, for another provider, or not equal
 *   to the `state` parameter.
 * - `access_denied`: the user refused consent at the provider.
 * - `provider_error`: the provider redirected back with another `error`.
 * - `invalid_request`: no `code` parameter.
 * - `exchange_failed`: the code-for-token exchange failed.
 * - `profile_failed`: the profile (or e-mail list) could not be read.
 * - `email_unverified`: the provider gave no e-mail it proves (no e-mail at all, with
 *   `allowUnverifiedEmail`).
 */
export type OAuthErrorCode =
  | "not_configured"
  | "invalid_state"
  | "access_denied"
  | "provider_error"
  | "invalid_request"
  | "exchange_failed"
  | "profile_failed"
  | "email_unverified";

/** Result of {@linkcode handleOAuthCallback}. */
export type OAuthResult =
  | { ok: true; user: OAuthUser }
  | { ok: false; error: OAuthErrorCode };

/** Options of {@linkcode startOAuth} and {@linkcode handleOAuthCallback}. */
export interface OAuthOptions {
  /** Current time in milliseconds since the epoch (default `Date.now()`), for tests. */
  now?: number;
  /**
   * Callback only: also succeed when the provider gives an e-mail it does not prove, with
   * `emailVerified: false` (default `false`: such a sign-in is `email_unverified`). For a site
   * that keys accounts on the provider's user id, e.g. with `/d1`'s `findOrCreateOAuthUser`,
   * which then only follows an existing link or makes a new account. Never use an unproven
   * e-mail for an allowlist, an owner check or a relay token.
   */
  allowUnverifiedEmail?: boolean;
}

interface StatePayload {
  p: OAuthProvider;
  s: string;
  v?: string;
}

function clientOf(config: OAuthConfig, provider: string): OAuthClient | null {
  if (!Object.hasOwn(SPECS, provider)) return null;
  const client = config?.clients?.[provider as OAuthProvider];
  return client && text(client.clientId) && text(client.clientSecret) ? client : null;
}

function endpointsOf(spec: ProviderSpec, client: OAuthClient): OAuthEndpoints {
  const defaults = spec.endpoints(client);
  const out = { ...defaults };
  if (client.baseUrl) {
    const base = new URL(client.baseUrl);
    const prefix = base.pathname.replace(/\/+$/, "");
    for (const key of Object.keys(defaults) as (keyof OAuthEndpoints)[]) {
      const u = new URL(defaults[key]!);
      out[key] = `${base.origin}${prefix}${u.pathname}${u.search}`;
    }
  }
  return { ...out, ...client.endpoints };
}

function stateCookieName(config: OAuthConfig): string {
  const name = config.stateCookieName ?? DEFAULT_STATE_COOKIE;
  if (!COOKIE_NAME.test(name)) throw new AuthError("invalid_options", "invalid stateCookieName");
  return name;
}

/**
 * The providers that have credentials in the config, in the order google, github, microsoft.
 *
 * @example
 * ```ts
 * import { configuredProviders } from "@gatehouse/gatehouse";
 * const providers = configuredProviders({
 *   clients: { github: { clientId: "id", clientSecret: "secret" } },
 *   stateSecret: "state secret",
 *   redirectUri: (p) => `https://example.com/api/auth/oauth/${p}/callback`,
 * });
 * console.log(providers); // ["github"]
 * ```
 */
export function configuredProviders(config: OAuthConfig): OAuthProvider[] {
  return OAUTH_PROVIDERS.filter((p) => clientOf(config, p) !== null);
}

/**
 * Starts a sign-in: a 302 response to the provider's authorize URL (client_id, redirect_uri,
 * scope, state, PKCE S256) that sets a signed, HttpOnly state cookie bound to the provider
 * for 10 minutes. Throws {@linkcode AuthError} `not_configured` for a provider without
 * credentials (check {@linkcode configuredProviders} first).
 *
 * @example
 * ```ts
 * import { startOAuth } from "@gatehouse/gatehouse";
 * const config = {
 *   clients: { google: { clientId: "id", clientSecret: "secret" } },
 *   stateSecret: "state secret",
 *   redirectUri: (p: string) => `https://example.com/api/auth/oauth/${p}/callback`,
 * };
 * const response = await startOAuth(config, "google");
 * console.log(response.status, response.headers.get("location")?.startsWith("https://accounts.google.com/")); // 302 true
 * ```
 */
export async function startOAuth(
  config: OAuthConfig,
  provider: OAuthProvider,
  options?: OAuthOptions,
): Promise<Response> {
  const client = clientOf(config, provider);
  if (!client) throw new AuthError("not_configured", `OAuth provider not configured: ${provider}`);
  const spec = SPECS[provider];
  const endpoints = endpointsOf(spec, client);
  const cookieName = stateCookieName(config);
  const state = b64urlEncode(randomBytes(32));
  const payload: StatePayload = { p: provider, s: state };
  const url = new URL(endpoints.authorize);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", client.clientId);
  url.searchParams.set("redirect_uri", config.redirectUri(provider));
  url.searchParams.set("scope", spec.scope);
  url.searchParams.set("state", state);
  if (spec.pkce) {
    const verifier = b64urlEncode(randomBytes(32));
    const challenge = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(verifier)));
    url.searchParams.set("code_challenge", b64urlEncode(challenge));
    url.searchParams.set("code_challenge_method", "S256");
    payload.v = verifier;
  }
  const token = await signToken(config.stateSecret, {
    purpose: STATE_PURPOSE,
    payload,
    ttlSeconds: OAUTH_STATE_TTL_SECONDS,
    now: options?.now,
  });
  return new Response(null, {
    status: 302,
    headers: {
      location: url.href,
      "set-cookie": `${cookieName}=${token}; ${cookieAttributes(OAUTH_STATE_TTL_SECONDS)}`,
      "cache-control": "no-store",
    },
  });
}

function cookieAttributes(maxAge: number): string {
  return `HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=${maxAge}`;
}

/**
 * The `Set-Cookie` value that removes the OAuth state cookie; send it with the callback's
 * response.
 *
 * @example
 * ```ts
 * import { clearOAuthStateCookie } from "@gatehouse/gatehouse";
 * const config = { clients: {}, stateSecret: "s", redirectUri: () => "https://example.com/cb" };
 * console.log(clearOAuthStateCookie(config)); // "__Host-gatehouse-oauth=; ...; Max-Age=0"
 * ```
 */
export function clearOAuthStateCookie(config: OAuthConfig): string {
  return `${stateCookieName(config)}=; ${cookieAttributes(0)}`;
}

async function readState(
  config: OAuthConfig,
  provider: OAuthProvider,
  request: Request,
  now: number | undefined,
): Promise<StatePayload | null> {
  const name = stateCookieName(config);
  for (const value of cookieValues(request.headers.get("cookie"), name)) {
    const claims = await verifyToken<StatePayload>(config.stateSecret, value, {
      purpose: STATE_PURPOSE,
      now,
    });
    const p = record(claims?.payload);
    if (p && p.p === provider && text(p.s)) return p as unknown as StatePayload;
  }
  return null;
}

/**
 * Finishes a sign-in on the provider's redirect back: checks the `state` parameter against the
 * signed state cookie (constant-time), exchanges the code (with the PKCE verifier), reads the
 * profile and e-mail, and succeeds only for an e-mail the provider proves (Google
 * `email_verified`, GitHub's verified primary address, Microsoft's `xms_edov` in the ID token),
 * unless `allowUnverifiedEmail` is set. Never throws.
 *
 * @example
 * ```ts
 * import { handleOAuthCallback } from "@gatehouse/gatehouse";
 * const config = {
 *   clients: { github: { clientId: "id", clientSecret: "secret" } },
 *   stateSecret: "state secret",
 *   redirectUri: (p: string) => `https://example.com/api/auth/oauth/${p}/callback`,
 * };
 * const result = await handleOAuthCallback(config, "github", new Request("https://example.com/cb?code=x&state=y"));
 * console.log(result); // { ok: false, error: "invalid_state" }: no state cookie
 * ```
 */
export async function handleOAuthCallback(
  config: OAuthConfig,
  provider: OAuthProvider,
  request: Request,
  options?: OAuthOptions,
): Promise<OAuthResult> {
  try {
    const client = clientOf(config, provider);
    if (!client) return { ok: false, error: "not_configured" };
    const spec = SPECS[provider];
    let endpoints: OAuthEndpoints;
    try {
      endpoints = endpointsOf(spec, client);
    } catch {
      return { ok: false, error: "not_configured" };
    }
    const params = new URL(request.url).searchParams;
    const saved = await readState(config, provider, request, options?.now);
    const state = params.get("state");
    if (!saved || state === null || !timingSafeEqualText(state, saved.s)) {
      return { ok: false, error: "invalid_state" };
    }
    const error = params.get("error");
    if (error !== null) {
      return { ok: false, error: error === "access_denied" ? "access_denied" : "provider_error" };
    }
    const code = params.get("code");
    if (!code) return { ok: false, error: "invalid_request" };
    const form = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: config.redirectUri(provider),
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    if (saved.v) form.set("code_verifier", saved.v);
    const tokens = record(
      await fetchJson(endpoints.token, {
        method: "POST",
        headers: {
          accept: "application/json",
          "content-type": "application/x-www-form-urlencoded",
        },
        body: form.toString(),
      }),
    );
    const accessToken = text(tokens?.access_token);
    if (!accessToken) return { ok: false, error: "exchange_failed" };
    const profile = await spec.profile(bearerGet, endpoints, {
      accessToken,
      idToken: text(tokens?.id_token),
      client,
      now: options?.now ?? Date.now(),
    });
    if (!profile) return { ok: false, error: "profile_failed" };
    const email = profile.email?.trim();
    const proven = profile.emailVerified === true;
    if (!email || (!proven && options?.allowUnverifiedEmail !== true)) {
      return { ok: false, error: "email_unverified" };
    }
    const user: OAuthUser = {
      provider,
      providerUserId: profile.providerUserId,
      email,
      emailVerified: proven,
    };
    if (profile.name) user.name = profile.name;
    return { ok: true, user };
  } catch {
    return { ok: false, error: "invalid_request" };
  }
}
