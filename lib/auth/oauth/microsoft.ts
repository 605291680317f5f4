/**
 * Microsoft identity platform (v2.0): the tenant goes in the URL (default `common`), PKCE, and
 * the OpenID userinfo endpoint on Microsoft Graph. Microsoft omits the `email` claim when the
 * address's domain is not verified by its owner (default for apps since 2023), so a present
 * address counts as verified unless the response explicitly says otherwise (`email_verified`
 * or `xms_edov` false).
 *
 * @module
 */
import { AuthError } from "../_errors.ts";
import { type ProviderSpec, record, text } from "./_provider.ts";

const TENANT = /^[A-Za-z0-9.-]{1,100}$/;

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
  async profile(http, endpoints, accessToken) {
    const info = record(await http(endpoints.userinfo, accessToken));
    const sub = text(info?.sub);
    if (!info || !sub) return null;
    const denied = info.email_verified === false || info.email_verified === "false" ||
      info.xms_edov === false || info.xms_edov === "false";
    const email = text(info.email);
    return {
      providerUserId: sub,
      email,
      emailVerified: email !== null && !denied,
      name: text(info.name) ?? undefined,
    };
  },
};
