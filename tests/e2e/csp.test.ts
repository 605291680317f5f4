/**
 * The app's pages still work under its Content-Security-Policy, in headless Chromium with
 * JavaScript on: every page is visited and the flows that use the hydration script (inline
 * errors through `fetch`), the development provider's consent form, the outbox's framed
 * e-mails and the sign-out forms are walked, with no `securitypolicyviolation` event and no
 * console error on the way.
 */
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import { context, HAVE_CHROMIUM, launch, startApp } from "./_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts

/** Collects CSP violations and console errors of every page of the context. */
async function watch(
  ctx: BrowserContext,
): Promise<{ problems: string[]; watchPage(p: Page): void }> {
  const problems: string[] = [];
  await ctx.exposeBinding("__cspViolation", ({ page }, text: string) => {
    problems.push(`${page.url()}: CSP ${text}`);
  });
  await ctx.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      // deno-lint-ignore no-explicit-any
      (globalThis as any).__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI}`);
    });
  });
  return {
    problems,
    watchPage(page: Page) {
      page.on("console", (msg) => {
        // A 4xx answer to the form's fetch is logged by Chromium as a failed load: expected.
        if (msg.type() === "error" && !msg.text().startsWith("Failed to load resource")) {
          problems.push(`${page.url()}: console ${msg.text()}`);
        }
      });
      page.on("pageerror", (err) => problems.push(`${page.url()}: page error ${err.message}`));
    },
  };
}

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name: "e2e csp: every page and the scripted flows run with no CSP violation or console error",
  ...opts,
  async fn() {
    const app = await startApp();
    const browser = await launch();
    try {
      const ctx = await context(browser, true);
      const { problems, watchPage } = await watch(ctx);
      const page = await ctx.newPage();
      watchPage(page);
      const loads: string[] = [];
      page.on("load", () => loads.push(page.url()));

      // Multi-user site: sign-up and verify through the hydrated forms (fetch, inline errors).
      const email = "csp@example.com";
      await page.goto(`${app.origin}/users/signup`);
      await page.waitForFunction(() => document.querySelector("script[type=module]") !== null);
      await page.waitForLoadState("networkidle");
      await page.getByLabel("E-mail").fill(email);
      await page.getByLabel("Password").fill("a long enough password");
      await page.getByRole("button", { name: "Create account" }).click();
      await page.waitForURL(/\/users\/verify\?email=/);

      await page.goto(`${app.origin}/users/outbox`);
      await page.locator("summary").first().click(); // the framed HTML version of the e-mail
      await page.frameLocator("iframe").first().locator("body").waitFor();
      const code = (await page.locator(".text").first().textContent())!.match(/\b(\d{6})\b/)![1];

      await page.goto(`${app.origin}/users/verify?email=${encodeURIComponent(email)}`);
      await page.waitForLoadState("networkidle");
      const before = loads.length;
      await page.getByLabel("Code").fill(code === "000000" ? "111111" : "000000");
      await page.getByRole("button", { name: "Verify" }).click();
      await page.getByRole("alert").getByText("That code is not right").waitFor();
      assert.equal(loads.length, before, "no page load: the hydrated form posted with fetch");
      await page.getByLabel("Code").fill(code);
      await page.getByRole("button", { name: "Verify" }).click();
      await page.waitForURL(/\/users\/$/);
      await page.getByLabel("Name").fill("Ada");
      await page.getByRole("button", { name: "Save name" }).click();
      await page.waitForURL(/\/users\/\?done=name$/);

      // Owner site: sign-in with the development provider (consent form posts and redirects).
      await page.goto(`${app.origin}/owner/login`);
      await page.getByRole("link", { name: "Continue with Google" }).click();
      await page.waitForURL(/\/dev-idp\/google\//);
      await page.getByLabel("E-mail", { exact: true }).fill("owner@example.com");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/owner\/$/);

      // Relay demo: through the broker, then sign out with its form.
      await page.goto(`${app.origin}/relay-demo/login`);
      await page.getByRole("link", { name: "Continue with GitHub" }).click();
      await page.getByLabel("E-mail", { exact: true }).fill("ada@example.com");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/relay-demo\/?$/);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(/\/relay-demo\/login$/);

      // Every other page, signed in where that matters.
      for (
        const path of [
          "/",
          "/owner/",
          "/owner/login",
          "/users/",
          "/users/login?error=invalid_credentials",
          "/users/forgot",
          "/users/reset?token=x",
          "/users/confirm-email?token=x",
          "/broker/",
          "/broker/start?site=relay-demo",
          "/relay-demo/login?oauth_error=access_denied",
          "/dev-idp/",
          "/dev-idp/github/login/oauth/authorize?client_id=x",
        ]
      ) {
        await page.goto(`${app.origin}${path}`);
        await page.waitForLoadState("networkidle");
      }
      // Sign out of the multi-user site with its form.
      await page.goto(`${app.origin}/users/`);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(/\/users\/login\?signed_out=1$/);

      assert.deepEqual(problems, []);
      await ctx.close();
    } finally {
      await browser.close();
      await app.close();
    }
  },
});
