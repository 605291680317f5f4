/**
 * Google: OpenID Connect with PKCE; the userinfo endpoint says whether the e-mail is verified.
 *
 * @module
 */
import { type ProviderSpec, record, text } from "./_provider.ts";

/** Google's provider declaration. */
export const google: ProviderSpec = {
  id: "google",
  scope: "openid email profile",
  pkce: true,
  endpoints: () => ({
    authorize: "https://accounts.google.com/o/oauth2/v2/auth",
    token: "https://oauth2.googleapis.com/token",
    userinfo: "https://openidconnect.googleapis.com/v1/userinfo",
  }),
  async profile(http, endpoints, { accessToken }) {
    const info = record(await http(endpoints.userinfo, accessToken));
    const sub = text(info?.sub);
    if (!info || !sub) return null;
    return {
      providerUserId: sub,
      email: text(info.email),
      emailVerified: info.email_verified === true || info.email_verified === "true",
      name: text(info.name) ?? undefined,
    };
  },
};
