import assert from "node:assert/strict";
import { context, HAVE_CHROMIUM, launch, shot, startApp, where } from "./_harness.ts";

// playwright-core keeps its Chromium pipe and timers in process-wide state that outlives a
// single test, so the op/resource sanitizers are off here; every test closes what it opened.
const opts = { sanitizeOps: false, sanitizeResources: false };

for (const js of [true, false]) {
  const mode = js ? "js" : "nojs";
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e relay (${mode}): SSO through the broker with the dev provider; forbidden e-mail gets 403`,
    ...opts,
    async fn() {
      const app = await startApp({
        RELAY_DEMO_ACCESS_MODE: "domain",
        RELAY_DEMO_ACCESS_DOMAINS: "example.com",
      });
      const browser = await launch();
      try {
        const ctx = await context(browser, js);
        const page = await ctx.newPage();
        await page.goto(`${app.origin}/relay-demo`);
        assert.equal(where(page), "/relay-demo/login");
        await shot(page, `relay-login-${mode}`);
        await page.getByRole("link", { name: "Continue with GitHub" }).click();
        await page.waitForURL(/\/dev-idp\/github\/login\/oauth\/authorize/);
        await shot(page, `dev-idp-consent-${mode}`);
        await page.getByLabel("E-mail", { exact: true }).fill("ada@example.com");
        await page.getByRole("button", { name: "Continue" }).click();
        await page.waitForURL(`${app.origin}/relay-demo`);
        assert.match(
          await page.textContent("main") ?? "",
          /Signed in as ada@example\.com through the relay broker/,
        );
        await shot(page, `relay-signed-in-${mode}`);
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.waitForURL(`${app.origin}/relay-demo/login`);

        // A refused e-mail: the site answers 403 forbidden.
        await page.getByRole("link", { name: "Continue with Google" }).click();
        await page.getByLabel("E-mail", { exact: true }).fill("mallory@evil.test");
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.url().includes("/relay-demo/api/auth/relay/callback")),
          page.getByRole("button", { name: "Continue" }).click(),
        ]);
        assert.equal(response.status(), 403);
        assert.match(
          await page.textContent("main") ?? "",
          /This account may not sign in here.*mallory@evil\.test is not allowed to sign in to Relay demo/s,
        );
        await page.getByRole("link", { name: "Sign in with another account" }).waitFor();
        await shot(page, `relay-forbidden-${mode}`);

        // Cancelling at the provider shows the reason in words.
        await page.goto(`${app.origin}/relay-demo/login`);
        await page.getByRole("link", { name: "Continue with Microsoft" }).click();
        await page.getByRole("button", { name: "Cancel" }).click();
        await page.waitForURL(/\/relay-demo\/login\?oauth_error=access_denied/);
        assert.match(
          await page.getByRole("alert").textContent() ?? "",
          /cancelled at the provider/,
        );
        await ctx.close();
      } finally {
        await browser.close();
        await app.close();
      }
    },
  });
}
