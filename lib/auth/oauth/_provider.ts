/**
 * What one OAuth provider file declares, the public config/record types they share, and the
 * JSON-over-HTTP helper the providers use to reach their endpoints.
 *
 * @module
 */
import type { Secrets } from "../token.ts";

/** Provider ids: Google, GitHub, Microsoft. */
export type OAuthProvider = "google" | "github" | "microsoft";

/** A provider's endpoint URLs. */
export interface OAuthEndpoints {
  /** Authorization (consent) page. */
  authorize: string;
  /** Code-for-token exchange. */
  token: string;
  /** Profile of the signed-in user. */
  userinfo: string;
  /** GitHub only: the user's e-mail addresses (fallback for the primary verified one). */
  emails?: string;
}

/** One provider's client credentials and optional endpoint overrides. */
export interface OAuthClient {
  /** OAuth client id. */
  clientId: string;
  /** OAuth client secret. */
  clientSecret: string;
  /** Microsoft only: tenant in the URL (`common`, `organizations`, `consumers` or an id); default `common`. */
  tenantId?: string;
  /**
   * Replaces the origin of every default endpoint of the provider, keeping their paths after
   * this URL's path: `http://127.0.0.1:8080/gh` makes GitHub's token endpoint
   * `http://127.0.0.1:8080/gh/login/oauth/access_token`. For tests and proxies.
   */
  baseUrl?: string;
  /** Full endpoint URLs, taking precedence over defaults and `baseUrl` (e.g. GitHub Enterprise). */
  endpoints?: Partial<OAuthEndpoints>;
}

/** A site's OAuth settings. */
export interface OAuthConfig {
  /** Clients by provider; a provider is configured when its client has an id and a secret. */
  clients: Partial<Record<OAuthProvider, OAuthClient>>;
  /** Signs the CSRF state cookie (`STATE_SECRET`; a list rotates: first signs, any verifies). */
  stateSecret: Secrets;
  /** The callback URL registered with a provider, e.g. `https://site/api/auth/oauth/github/callback`. */
  redirectUri: (provider: OAuthProvider) => string;
  /** Name of the state cookie; default `__Host-gatehouse-oauth`. */
  stateCookieName?: string;
}

/** The user a successful callback yields. */
export interface OAuthUser {
  /** Which provider verified the user. */
  provider: OAuthProvider;
  /** The provider's id for the user. */
  providerUserId: string;
  /** The user's e-mail. */
  email: string;
  /**
   * Whether the provider proved the e-mail (Google: `email_verified`; GitHub: the primary
   * address of the user's e-mail list is `verified`; Microsoft: the ID token's `xms_edov`).
   * Always `true` in a successful result unless the callback was given `allowUnverifiedEmail`;
   * an unproven e-mail is then only a suggestion: never use it for an allowlist, an owner
   * check, a relay or to find an account.
   */
  emailVerified: boolean;
  /** Display name, when the provider gives one. */
  name?: string;
}

/** What the code-for-token exchange gave, for a provider's profile step. */
export interface ProfileGrant {
  /** The access token for the profile endpoints. */
  accessToken: string;
  /**
   * The OpenID Connect ID token of the token response (`null` when there was none). It came
   * straight from the token endpoint over TLS, so its claims are read without checking its
   * signature (OpenID Connect Core 3.1.3.7, item 6); `aud`, `exp`, `iss` and `sub` are checked.
   */
  idToken: string | null;
  /** The client the code was exchanged for. */
  client: OAuthClient;
  /** Current time in milliseconds since the epoch. */
  now: number;
}

/** What a provider's profile step found (before the verified-e-mail check). */
export interface ProfileResult {
  providerUserId: string;
  email: string | null;
  emailVerified: boolean;
  name?: string;
}

/** Declaration of one provider over the shared core. */
export interface ProviderSpec {
  id: OAuthProvider;
  /** Space-separated scopes for the authorize URL. */
  scope: string;
  /** Whether the provider supports PKCE (S256). */
  pkce: boolean;
  /** Default endpoints for a client (Microsoft puts the tenant in the path). */
  endpoints(client: OAuthClient): OAuthEndpoints;
  /** Reads the profile with the exchange's tokens; `null` when a request or its JSON fails. */
  profile(
    http: Http,
    endpoints: OAuthEndpoints,
    grant: ProfileGrant,
  ): Promise<ProfileResult | null>;
}

/** GETs JSON with a bearer token; `null` on any network, status or JSON failure. */
export type Http = (
  url: string,
  accessToken: string,
  headers?: Record<string, string>,
) => Promise<unknown>;

const TIMEOUT_MS = 10_000;

/** Fetch with a timeout that is always cleared; `null` on any failure or non-2xx status. */
export async function fetchJson(url: string, init: RequestInit): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  try {
    const res = await fetch(url, { ...init, signal: controller.signal });
    const text = await res.text();
    if (!res.ok) return null;
    return JSON.parse(text);
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** The {@linkcode Http} the providers use. */
export const bearerGet: Http = (url, accessToken, headers) =>
  fetchJson(url, {
    headers: { accept: "application/json", ...headers, authorization: `Bearer ${accessToken}` },
  });

/** A JSON object as a record, or `null`. */
export function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? value as Record<string, unknown>
    : null;
}

/** A non-empty string, or `null`. */
export function text(value: unknown): string | null {
  return typeof value === "string" && value.length > 0 ? value : null;
}
