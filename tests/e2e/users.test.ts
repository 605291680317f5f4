import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { context, HAVE_CHROMIUM, launch, shot, startApp, where } from "./_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts

/** The newest outbox message to `email` whose text matches `pattern`; its first match. */
async function fromOutbox(
  page: Page,
  origin: string,
  email: string,
  pattern: RegExp,
): Promise<string> {
  await page.goto(`${origin}/users/outbox`);
  const articles = page.locator("article").filter({ has: page.locator(".to", { hasText: email }) });
  const text = await articles.first().locator(".text").textContent() ?? "";
  const match = text.match(pattern);
  assert.ok(match, `outbox message for ${email} matching ${pattern}: ${text}`);
  return match[1] ?? match[0];
}

for (const js of [true, false]) {
  const mode = js ? "js" : "nojs";
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name: `e2e users (${mode}): sign up, code from the outbox, verify, sign out, reset, sign in`,
    ...opts,
    async fn() {
      const app = await startApp();
      const browser = await launch();
      const email = `ada-${mode}@example.com`;
      try {
        const ctx = await context(browser, js);
        const page = await ctx.newPage();

        // Protected page without a session: 302 to the sign-in route, then the login page.
        await page.goto(`${app.origin}/users/`);
        assert.equal(where(page), "/users/login");
        await shot(page, `users-login-${mode}`);

        await page.getByRole("link", { name: "Create an account" }).click();
        await page.waitForURL(/\/users\/signup$/);
        await shot(page, `users-signup-${mode}`);
        await page.getByLabel("E-mail").fill(email);
        await page.getByLabel("Password").fill("first correct horse battery");
        await page.getByRole("button", { name: "Create account" }).click();
        await page.waitForURL(/\/users\/verify\?email=/);
        await shot(page, `users-verify-${mode}`);

        const code = await fromOutbox(page, app.origin, email, /\b(\d{6})\b/);
        await shot(page, `users-outbox-${mode}`);
        await page.goto(`${app.origin}/users/verify?email=${encodeURIComponent(email)}`);
        await page.getByLabel("Code").fill(code === "000000" ? "111111" : "000000");
        await page.getByRole("button", { name: "Verify" }).click();
        await page.getByRole("alert").getByText("That code is not right").waitFor();
        // Hydrated, the error came inline from fetch; without JS, by a redirect with ?error=.
        assert.equal(new URL(page.url()).searchParams.get("error"), js ? null : "invalid_code");
        await page.getByLabel("Code").fill(code);
        await page.getByRole("button", { name: "Verify" }).click();
        await page.waitForURL(/\/users\/$/);
        assert.match(await page.textContent("body") ?? "", new RegExp(`Signed in as ${email}`));
        await shot(page, `users-account-${mode}`);

        await page.getByRole("button", { name: "Sign out" }).click();
        await page.waitForURL(/\/users\/login\?signed_out=1$/);
        await page.goto(`${app.origin}/users/`);
        assert.equal(where(page), "/users/login", "signed out");

        await page.getByRole("link", { name: "Forgot your password?" }).click();
        await page.getByLabel("E-mail").fill(email);
        await page.getByRole("button", { name: "Send reset link" }).click();
        await page.getByRole("status").getByText("If an account exists for that address").waitFor();
        await shot(page, `users-forgot-sent-${mode}`);

        const link = await fromOutbox(
          page,
          app.origin,
          email,
          /(https?:\/\/\S+\/users\/reset\?token=\S+)/,
        );
        await page.goto(link);
        await shot(page, `users-reset-${mode}`);
        await page.getByLabel("New password").fill("second correct horse battery");
        await page.getByRole("button", { name: "Save new password" }).click();
        await page.waitForURL(/\/users\/login\?reset=1$/);
        await page.getByRole("status").getByText("Your password was changed").waitFor();

        await page.getByLabel("E-mail").fill(email);
        await page.getByLabel("Password").fill("first correct horse battery");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("alert").getByText("don't match an account").waitFor();
        await shot(page, `users-login-error-${mode}`);
        await page.getByLabel("E-mail").fill(email);
        await page.getByLabel("Password").fill("second correct horse battery");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.waitForURL(/\/users\/$/);
        assert.match(await page.textContent("body") ?? "", new RegExp(`Signed in as ${email}`));

        // The reset link is single-use: opened again, it says so at once (no form), with the
        // next step.
        await page.goto(link);
        await page.getByRole("heading", { name: "This reset link no longer works" }).waitFor();
        await page.getByRole("alert").getByText("already used or has expired").waitFor();
        assert.equal(await page.getByLabel("New password").count(), 0);
        await page.getByRole("link", { name: "Send me a new link" }).click();
        await page.waitForURL(/\/users\/forgot$/);
        await ctx.close();
      } finally {
        await browser.close();
        await app.close();
      }
    },
  });
}
