/**
 * A site that requires a second factor (`USERS_REQUIRE_SECOND_FACTOR=1`) in Chromium, on the
 * multi-user site over libSQL and over D1 (Miniflare), with JavaScript on and off: a new
 * account sets up an authenticator app right after its signup code, before it is signed in;
 * the password then always asks for the code; and wrong codes at the second step are
 * throttled like passwords: the page says to wait (with JavaScript, the answer to its request
 * is 429 with `Retry-After`; without, the form's redirect shows the same sentence). A provider
 * is one factor too: signing in with the development identity provider sets up the app first,
 * then asks for its code each time (on libSQL: the provider is part of the whole app).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { THROTTLE } from "../../d1.ts";
import { HAVE_CHROMIUM, launch, where } from "./_harness.ts";
import { checkPage } from "./_console.ts";
import { newestCode } from "./_users_site.ts";
import { type Backend, desktop, startFactorsSite } from "./_factors_site.ts";
import { appCode } from "../d1/_totp.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts
const PASSWORD = "site-wide second factor passphrase";
const WAIT = "Too many attempts. Please wait a minute and try again.";

async function password(page: Page, origin: string, email: string): Promise<void> {
  await page.goto(`${origin}/users/login`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(/\/users\/second-factor$/);
}

for (const backend of ["libsql", "d1"] as Backend[]) {
  for (const js of [true, false]) {
    const mode = js ? "js" : "nojs";
    Deno.test({
      ignore: !HAVE_CHROMIUM,
      name:
        `e2e site-wide second factor (${backend}, ${mode}): set up after the signup code, the code at each sign-in, wrong codes throttled`,
      ...opts,
      async fn() {
        const site = await startFactorsSite(backend, { USERS_REQUIRE_SECOND_FACTOR: "1" });
        const browser = await launch();
        try {
          const page = await (await desktop(browser, js)).newPage();
          const email = `site2fa-${backend}-${mode}-${crypto.randomUUID().slice(0, 8)}@example.com`;
          await page.goto(`${site.origin}/users/signup`);
          await page.getByLabel("E-mail").fill(email);
          await page.getByLabel("Password").fill(PASSWORD);
          await page.getByRole("button", { name: "Create account" }).click();
          await page.waitForURL(/\/users\/verify\?email=/);
          await page.getByLabel("Code").fill(await newestCode(site.direct, email));
          await page.getByRole("button", { name: "Verify" }).click();

          // The signup code verified the address; the app comes before the account page.
          await page.waitForURL(/\/users\/second-factor\/setup$/);
          const cookies = (await page.context().cookies()).map((c) => c.name);
          assert.ok(!cookies.includes("__Host-users-session"), "not signed in yet");
          await checkPage(page, `site2fa-setup-${backend}-${mode}`, {
            javaScript: js,
            everyImpact: true,
          });
          const key = await page.locator("[data-totp-key]").getAttribute("data-totp-key") ?? "";
          await page.getByLabel("Code from the app").fill(appCode(key, Date.now()));
          await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
          const codes = page.getByRole("list", { name: "Backup codes" }).getByRole("listitem");
          await codes.first().waitFor();
          assert.equal(await codes.count(), 10);
          await page.getByRole("link", { name: "I have kept them: continue" }).click();
          await page.waitForURL(/\/users\/$/);
          assert.match(await page.textContent("body") ?? "", new RegExp(`Signed in as ${email}`));

          // The password alone is never enough.
          await page.getByRole("button", { name: "Sign out" }).click();
          await page.waitForURL(/\/users\/login\?signed_out=1$/);
          await password(page, site.origin, email);
          await page.getByLabel("Code", { exact: true }).fill(appCode(key, Date.now() + 30_000));
          await page.getByRole("button", { name: "Continue" }).click();
          await page.waitForURL(/\/users\/$/);

          // Another browser guesses codes: 5 wrong ones are checked, then it must wait. (A
          // machine slow enough to let the first 1-second wait pass counts one more guess.)
          const guesser = await (await desktop(browser, js)).newPage();
          await password(guesser, site.origin, email);
          const statuses: number[] = [];
          guesser.on("response", (r) => {
            if (r.url().endsWith("/users/api/auth/second-factor")) statuses.push(r.status());
          });
          let retryAfter: string | null = null;
          for (let i = 0; i < THROTTLE.accountClient + 8; i++) {
            await guesser.getByLabel("Code", { exact: true }).fill("000000");
            const answer = guesser.waitForResponse((r) =>
              r.url().endsWith("/users/api/auth/second-factor")
            );
            await guesser.getByRole("button", { name: "Continue" }).click();
            const r = await answer;
            await guesser.getByRole("alert").waitFor();
            if (js ? r.status() === 429 : where(guesser).includes("error=too_many_attempts")) {
              retryAfter = await r.headerValue("retry-after");
              break;
            }
            await guesser.getByRole("alert").getByText("That code is not right").waitFor();
          }
          await guesser.getByRole("alert").getByText(WAIT).waitFor();
          assert.ok(statuses.length > THROTTLE.accountClient, String(statuses));
          if (js) {
            assert.deepEqual(statuses.slice(0, THROTTLE.accountClient), [401, 401, 401, 401, 401]);
            assert.equal(statuses.at(-1), 429);
          } else {
            // A form post is answered with the page again (303), the sentence on it.
            assert.ok(statuses.every((s) => s === 303), String(statuses));
          }
          assert.match(retryAfter ?? "", /^[1-9]\d*$/);
          assert.equal(where(guesser).split("?")[0], "/users/second-factor");
          await checkPage(guesser, `site2fa-throttled-${backend}-${mode}`, {
            javaScript: js,
            everyImpact: true,
          });
        } finally {
          await browser.close();
          await site.close();
        }
      },
    });
  }
}

/** Signs in with the development identity provider's GitHub as `email`. */
async function github(page: Page, origin: string, email: string): Promise<void> {
  await page.goto(`${origin}/users/login`);
  await page.getByRole("link", { name: "Continue with GitHub" }).click();
  await page.waitForURL(/\/dev-idp\/github\/login\/oauth\/authorize/);
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByRole("button", { name: "Continue" }).click();
}

for (const js of [true, false]) {
  const mode = js ? "js" : "nojs";
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e site-wide second factor (libsql, ${mode}): a provider sign-in sets up the app first, then asks for its code`,
    ...opts,
    async fn() {
      const site = await startFactorsSite("libsql", { USERS_REQUIRE_SECOND_FACTOR: "1" });
      const browser = await launch();
      try {
        const page = await (await desktop(browser, js)).newPage();
        const email = `oauth2fa-${mode}-${crypto.randomUUID().slice(0, 8)}@example.com`;
        // A new account through the provider: the app comes before the account page.
        await github(page, site.origin, email);
        await page.waitForURL(/\/users\/second-factor\/setup$/);
        const cookies = (await page.context().cookies()).map((c) => c.name);
        assert.ok(!cookies.includes("__Host-users-session"), "not signed in yet");
        const key = await page.locator("[data-totp-key]").getAttribute("data-totp-key") ?? "";
        await page.getByLabel("Code from the app").fill(appCode(key, Date.now()));
        await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
        await page.getByRole("link", { name: "I have kept them: continue" }).click();
        await page.waitForURL(/\/users\/$/);
        assert.match(await page.textContent("body") ?? "", new RegExp(`Signed in as ${email}`));

        // The provider alone is never enough: its sign-in asks for the code.
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.waitForURL(/\/users\/login\?signed_out=1$/);
        await github(page, site.origin, email);
        await page.waitForURL(/\/users\/second-factor$/);
        const after = (await page.context().cookies()).map((c) => c.name);
        assert.ok(!after.includes("__Host-users-session"), "not signed in before the code");
        await checkPage(page, `site2fa-oauth-${mode}`, { javaScript: js, everyImpact: true });
        await page.getByLabel("Code", { exact: true }).fill(appCode(key, Date.now() + 30_000));
        await page.getByRole("button", { name: "Continue" }).click();
        await page.waitForURL(/\/users\/$/);
        assert.match(await page.textContent("body") ?? "", new RegExp(`Signed in as ${email}`));
      } finally {
        await browser.close();
        await site.close();
      }
    },
  });
}
