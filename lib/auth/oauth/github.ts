/**
 * GitHub: OAuth app flow with PKCE. The e-mail is the primary address of the user-emails
 * endpoint (scope `user:email`), proven when that entry is `verified`; the profile's public
 * `email` is not used, since nothing in it says it is verified.
 *
 * @module
 */
import { type ProviderSpec, record, text } from "./_provider.ts";

const API_HEADERS = {
  accept: "application/vnd.github+json",
  "user-agent": "gatehouse",
  "x-github-api-version": "2022-11-28",
};

/** GitHub's provider declaration. */
export const github: ProviderSpec = {
  id: "github",
  scope: "read:user user:email",
  pkce: true,
  endpoints: () => ({
    authorize: "https://github.com/login/oauth/authorize",
    token: "https://github.com/login/oauth/access_token",
    userinfo: "https://api.github.com/user",
    emails: "https://api.github.com/user/emails",
  }),
  async profile(http, endpoints, { accessToken }) {
    const user = record(await http(endpoints.userinfo, accessToken, API_HEADERS));
    const id = typeof user?.id === "number" || typeof user?.id === "string" ? String(user.id) : "";
    if (!user || !id) return null;
    const name = text(user.name) ?? text(user.login) ?? undefined;
    if (!endpoints.emails) return null;
    const emails = await http(endpoints.emails, accessToken, API_HEADERS);
    if (!Array.isArray(emails)) return null;
    const primary = emails.map(record).find((e) => e?.primary === true && text(e.email));
    return {
      providerUserId: id,
      email: text(primary?.email),
      emailVerified: primary?.verified === true,
      name,
    };
  },
};
