import assert from "node:assert/strict";
import { context, HAVE_CHROMIUM, launch, shot, startApp, where } from "./_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts

for (const js of [true, false]) {
  const mode = js ? "js" : "nojs";
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e sites (${mode}): owner and multi-user sites sign in with the dev provider; refused e-mail gets 403`,
    ...opts,
    async fn() {
      const app = await startApp();
      const browser = await launch();
      try {
        const ctx = await context(browser, js);
        const page = await ctx.newPage();

        // Multi-user site: SSO creates the account and signs in.
        await page.goto(`${app.origin}/users/login`);
        await page.getByRole("link", { name: "Continue with Microsoft" }).click();
        await page.waitForURL(/\/dev-idp\/microsoft\/common\/oauth2\/v2\.0\/authorize/);
        await page.getByLabel("E-mail", { exact: true }).fill(`grace-${mode}@example.com`);
        await page.getByRole("button", { name: "Continue" }).click();
        await page.waitForURL(/\/users\/$/);
        assert.match(
          await page.textContent("body") ?? "",
          new RegExp(`Signed in as grace-${mode}@example\\.com`),
        );
        await shot(page, `users-sso-signed-in-${mode}`);

        // Owner-only site: the sign-in page is LoginPage; a wrong password is refused in words.
        await page.goto(`${app.origin}/owner`);
        assert.equal(where(page), "/owner/api/auth/login");
        await shot(page, `owner-login-${mode}`);
        await page.getByLabel("E-mail").fill("owner@example.com");
        await page.getByLabel("Password").fill("not the password");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("alert").getByText("Wrong e-mail or password.").waitFor();
        await shot(page, `owner-login-error-${mode}`);

        // A provider-verified e-mail that is not the owner's: 403 forbidden.
        await page.goto(`${app.origin}/owner/login`);
        await page.getByRole("link", { name: "Continue with Google" }).click();
        await page.getByLabel("E-mail", { exact: true }).fill("mallory@example.com");
        const [refused] = await Promise.all([
          page.waitForResponse((r) => r.url().includes("/owner/api/auth/oauth/google/callback")),
          page.getByRole("button", { name: "Continue" }).click(),
        ]);
        assert.equal(refused.status(), 403);
        assert.match(
          await page.textContent("main") ?? "",
          /mallory@example\.com is not allowed to sign in to Owner-only site/,
        );
        await page.getByRole("link", { name: "Sign in with another account" }).waitFor();
        await shot(page, `owner-forbidden-${mode}`);

        // The owner through the provider.
        await page.goto(`${app.origin}/owner/login`);
        await page.getByRole("link", { name: "Continue with GitHub" }).click();
        await page.getByLabel("E-mail", { exact: true }).fill("owner@example.com");
        await page.getByRole("button", { name: "Continue" }).click();
        await page.waitForURL(/\/owner\/$/);
        assert.match(await page.textContent("body") ?? "", /Signed in as owner@example\.com/);
        await shot(page, `owner-signed-in-${mode}`);
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.waitForURL(/\/owner\/login$/);

        // And with the documented local password.
        await page.getByLabel("E-mail").fill("owner@example.com");
        await page.getByLabel("Password").fill("owner-password");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForURL(/\/owner\/$/);
        await ctx.close();
      } finally {
        await browser.close();
        await app.close();
      }
    },
  });
}
