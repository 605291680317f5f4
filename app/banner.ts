/**
 * What `deno task start` prints, so a newcomer has everything on one screen: each site's
 * address, the console with the development owner's login, the mail API's sandbox key and
 * operator token (development only: no secret is ever printed in production), then the line
 * that says the app listens.
 *
 * @module
 */
import type { AppEnv } from "./env.ts";
import { mailSandboxLines } from "./mail.ts";
import { DEV_CONSOLE_LOGIN } from "./console/dev_owner.ts";
import { siteSecret } from "./dev_secret.ts";

function withOperatorToken(lines: string[], env: AppEnv, origin: string): string[] {
  const token = `  operator token:   ${siteSecret(env, "MAIL_OPERATOR_TOKEN")}  (mailroom API at ` +
    `${origin}/api/account-docs/v2/mailroom)`;
  return [lines[0], token, ...lines.slice(1)];
}

/** The start-up lines for the app at `origin` with these mounted sites. */
export async function startBanner(
  env: AppEnv,
  origin: string,
  mounted: { path: string; title: string }[],
): Promise<string[]> {
  const width = Math.max(...mounted.map((m) => m.title.length));
  const lines = [
    `Gatehouse demo (${env.MODE})`,
    "",
    "Sites:",
    ...mounted.map((m) => `  ${m.title.padEnd(width)}  ${origin}${m.path}/`),
  ];
  if (env.MODE === "development") {
    lines.push(
      "",
      `Operator's console: ${origin}/admin/`,
      `  development owner login: ${DEV_CONSOLE_LOGIN.email} / ${DEV_CONSOLE_LOGIN.password}`,
      `  (also the owner-only site's login; set OWNER_EMAILS and OWNER_PASSWORD_HASH to change it)`,
      "",
      ...withOperatorToken(await mailSandboxLines(env, origin), env, origin),
      "",
      "Development outbox (e-mails the app sent): " + `${origin}/users/outbox`,
    );
  }
  lines.push("", `Gatehouse demo listening on ${origin}/`);
  return lines;
}
