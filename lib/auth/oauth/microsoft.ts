/**
 * Microsoft identity platform (v2.0): the tenant goes in the URL (default `common`), PKCE, and
 * the OpenID userinfo endpoint on Microsoft Graph.
 *
 * Microsoft's `email` claim is not proof of anything: in a tenant, a user without a mailbox can
 * have any address set, and an app for several tenants would take an attacker's tenant for the
 * victim's address ("nOAuth"). The proof is the optional claim `xms_edov` ("e-mail domain
 * owner verified"), a Boolean that the userinfo endpoint never returns: it comes in the ID
 * token when the app registration adds `email` and `xms_edov` to the ID token's optional
 * claims. So the address counts as verified only when the ID token of the exchange is this
 * client's (`aud`), unexpired, from a v2.0 issuer of its own tenant (`iss` is
 * `https://<host>/<tid>/v2.0`, and `tid` is the configured tenant when that is a tenant id), for
 * the same user as the userinfo (`sub`), and says `xms_edov: true` for the same address.
 * Anything else leaves the address unproven; `sub` (Microsoft's pairwise id of the user for
 * this app) stays the identity either way.
 *
 * @module
 */
import { AuthError } from "../_errors.ts";
import { b64urlDecode, fromUtf8 } from "../_encoding.ts";
import { canonicalEmail } from "../email.ts";
import { type ProfileGrant, type ProviderSpec, record, text } from "./_provider.ts";

const TENANT = /^[A-Za-z0-9.-]{1,100}$/;
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISSUER = /^https:\/\/[^/?#]+\/([0-9a-f-]{36})\/v2\.0$/i;

/** The claims of the exchange's ID token when it is this client's, current and for `sub`. */
function idTokenClaims(grant: ProfileGrant, sub: string): Record<string, unknown> | null {
  const parts = grant.idToken?.split(".");
  if (!parts || parts.length !== 3) return null;
  const bytes = b64urlDecode(parts[1]);
  let claims: Record<string, unknown> | null = null;
  try {
    const json = bytes && fromUtf8(bytes);
    claims = json ? record(JSON.parse(json)) : null;
  } catch {
    return null;
  }
  if (!claims || claims.sub !== sub) return null;
  const aud = claims.aud;
  if (
    !(aud === grant.client.clientId || Array.isArray(aud) && aud.includes(grant.client.clientId))
  ) {
    return null;
  }
  if (typeof claims.exp !== "number" || claims.exp * 1000 <= grant.now) return null;
  const tid = text(claims.tid);
  const issuer = typeof claims.iss === "string" ? ISSUER.exec(claims.iss) : null;
  if (!tid || !issuer || issuer[1].toLowerCase() !== tid.toLowerCase()) return null;
  const tenant = grant.client.tenantId;
  if (tenant && TENANT_ID.test(tenant) && tenant.toLowerCase() !== tid.toLowerCase()) return null;
  return claims;
}

/** `xms_edov` as Microsoft sends it: a Boolean (string forms accepted). */
function isTrue(v: unknown): boolean {
  return v === true || v === "true" || v === 1 || v === "1";
}

/** Microsoft's provider declaration. */
export const microsoft: ProviderSpec = {
  id: "microsoft",
  scope: "openid email profile",
  pkce: true,
  endpoints(client) {
    const tenant = client.tenantId || "common";
    if (!TENANT.test(tenant)) throw new AuthError("invalid_options", "invalid Microsoft tenantId");
    const base = `https://login.microsoftonline.com/${tenant}/oauth2/v2.0`;
    return {
      authorize: `${base}/authorize`,
      token: `${base}/token`,
      userinfo: "https://graph.microsoft.com/oidc/userinfo",
    };
  },
  async profile(http, endpoints, grant) {
    const info = record(await http(endpoints.userinfo, grant.accessToken));
    const sub = text(info?.sub);
    if (!info || !sub) return null;
    const claims = idTokenClaims(grant, sub);
    const email = text(info.email) ?? text(claims?.email);
    const proven = email !== null && claims !== null && isTrue(claims.xms_edov) &&
      canonicalEmail(claims.email) === canonicalEmail(email);
    return {
      providerUserId: sub,
      email,
      emailVerified: proven,
      name: text(info.name) ?? undefined,
    };
  },
};
