/**
 * The demo sites' pages after sign-in, in Chromium with JavaScript on and off, each checked by
 * axe-core and screenshotted at desktop and phone width (with JavaScript on and off alike):
 * the owner's home (dates in words), the account page in sections, "check your new inbox"
 * after an e-mail change, a used e-mail-change link and a used or expired password-reset link
 * that say so with the next step, "Set a password" for an account made through a provider,
 * account deletion that asks first and ends on a page that says what happened, and the styled
 * 403 for a refused provider e-mail.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { context, HAVE_CHROMIUM, launch } from "./_harness.ts";
import { checkPage, makeUser } from "./_console.ts";
import { lastMail, startConsoleApp } from "../app/console/_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function consent(page: Page, email: string): Promise<void> {
  await page.waitForURL(/\/dev-idp\//);
  await page.getByLabel("E-mail", { exact: true }).fill(email);
  await page.getByRole("button", { name: "Continue" }).click();
}

for (const js of [true, false]) {
  const mode = js ? "js" : "nojs";
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e site pages (${mode}): owner home, account sections, e-mail change, first password, deletion, 403`,
    ...opts,
    async fn(t) {
      // axe at desktop and phone width, screenshots of both, nothing wider than the phone.
      const check = (page: Page, name: string) =>
        checkPage(page, `${name}-${mode}`, { javaScript: js });
      const app = await startConsoleApp();
      const browser = await launch();
      try {
        const ctx = await context(browser, js);
        const page = await ctx.newPage();

        await t.step("the owner's home says when, in words", async () => {
          await page.goto(`${app.origin}/owner/login`);
          await page.getByLabel("E-mail").fill("owner@example.com");
          await page.getByLabel("Password").fill("owner-password");
          await page.getByRole("button", { name: "Sign in" }).click();
          await page.waitForURL(/\/owner\/$/);
          const text = await page.locator("main").textContent() ?? "";
          assert.match(
            text,
            /You signed in just now\. The session ends in 1 week \(\d+ \w+ \d{4} at \d\d:\d\d UTC\)/,
          );
          assert.doesNotMatch(text, /\d{4}-\d\d-\d\dT/, "no ISO strings");
          await check(page, "owner-home");
        });

        await t.step(
          "a refused provider e-mail gets a page that says so, with a way back",
          async () => {
            const other = await context(browser, js);
            const p = await other.newPage();
            await p.goto(`${app.origin}/owner/login`);
            await p.getByRole("link", { name: "Continue with Google" }).click();
            await consent(p, `mallory.${mode}@example.com`);
            await p.getByRole("heading", { name: "This account may not sign in here" }).waitFor();
            await check(p, "refused-403");
            await p.getByRole("link", { name: "Sign in with another account" }).click();
            await p.waitForURL(/\/owner\/login$/);
            await other.close();
          },
        );

        const email = `ada.${mode}@example.com`;
        await makeUser(app.db, email, { password: "ada's long passphrase" });
        await t.step(
          "the account page in sections; an e-mail change says to check the new inbox",
          async () => {
            await page.goto(`${app.origin}/users/login`);
            await page.getByLabel("E-mail").fill(email);
            await page.getByLabel("Password").fill("ada's long passphrase");
            await page.getByRole("button", { name: "Sign in" }).click();
            await page.waitForURL(/\/users\/$/);
            for (
              const section of [
                "Profile",
                "Password",
                "E-mail address",
                "Linked sign-ins",
                "Sessions",
                "Danger zone",
              ]
            ) {
              await page.getByRole("heading", { name: section, exact: true }).waitFor();
            }
            await check(page, "account");
            const next = `ada.new.${mode}@example.com`;
            await page.getByLabel("New e-mail").fill(next);
            await page.locator("#email-password").fill("ada's long passphrase");
            await page.getByRole("button", { name: "Change e-mail" }).click();
            await page.getByRole("status").filter({
              hasText: `Check your new inbox: we sent a link to ${next}`,
            }).waitFor();
            const link = (await lastMail(app.db, next))!.text.match(
              /(https?:\/\/\S+confirm-email\?token=\S+)/,
            )![1];
            await page.goto(link);
            await page.getByRole("status").filter({ hasText: `Your account now uses ${next}` })
              .waitFor();
            await page.goto(link);
            await page.getByRole("heading", { name: "E-mail not changed" }).waitFor();
            assert.match(
              await page.getByRole("alert").textContent() ?? "",
              /already used, has expired/,
            );
            assert.match(
              await page.locator("main").textContent() ?? "",
              /ask for a new link on your account page/,
            );
            await check(page, "link-used");
          },
        );

        await t.step(
          "a used or expired password-reset link says so when opened, with the next step",
          async () => {
            const who = `ada.new.${mode}@example.com`;
            const other = await context(browser, js);
            const p = await other.newPage();
            await p.goto(`${app.origin}/users/forgot`);
            await p.getByLabel("E-mail").fill(who);
            await p.getByRole("button", { name: "Send reset link" }).click();
            await p.getByRole("status").getByText("If an account exists for that address")
              .waitFor();
            await p.goto(`${app.origin}/users/outbox`); // waits for the mail to be sent
            const link = (await lastMail(app.db, who))!.text.match(
              /(https?:\/\/\S+\/users\/reset\?token=\S+)/,
            )![1];
            // Live: the form. Expired or forged: the page that says so, at once.
            await p.goto(link);
            await p.getByLabel("New password").waitFor();
            await p.goto(`${app.origin}/users/reset?token=expired.or.forged`);
            await p.getByRole("heading", { name: "This reset link no longer works" }).waitFor();
            assert.match(
              await p.getByRole("alert").textContent() ?? "",
              /already used or has expired \(a link works for 1 hour\)/,
            );
            assert.equal(await p.getByLabel("New password").count(), 0, "no form");
            await check(p, "reset-link-dead");
            // Used, then opened again: the same page; its next step leads to a new link.
            await p.goto(link);
            await p.getByLabel("New password").fill("ada's second long passphrase");
            await p.getByRole("button", { name: "Save new password" }).click();
            await p.waitForURL(/\/users\/login\?reset=1$/);
            await p.goto(link);
            await p.getByRole("heading", { name: "This reset link no longer works" }).waitFor();
            await p.getByRole("link", { name: "Send me a new link" }).click();
            await p.waitForURL(/\/users\/forgot$/);
            await other.close();
          },
        );

        await t.step(
          "deleting asks first, then ends on a page that says what happened",
          async () => {
            // The e-mail change ended every session: sign in with the new address.
            await page.goto(`${app.origin}/users/login`);
            await page.getByLabel("E-mail").fill(`ada.new.${mode}@example.com`);
            await page.getByLabel("Password").fill("ada's second long passphrase");
            await page.getByRole("button", { name: "Sign in" }).click();
            await page.waitForURL(/\/users\/$/);
            await page.getByRole("link", { name: "Delete my account…" }).click();
            await page.getByRole("heading", { name: "Delete your account?" }).waitFor();
            await check(page, "account-delete");
            await page.getByLabel("Your password").fill("not my password at all");
            await page.getByLabel("I understand that this cannot be undone").check();
            await page.getByRole("button", { name: "Delete my account" }).click();
            await page.getByRole("alert").filter({
              hasText: "Nothing was deleted. Your current password is not right.",
            }).waitFor();
            await page.getByLabel("Your password").fill("ada's second long passphrase");
            await page.getByLabel("I understand that this cannot be undone").check();
            await page.getByRole("button", { name: "Delete my account" }).click();
            await page.getByRole("heading", { name: "Your account was deleted" }).waitFor();
            await check(page, "deleted");
            await page.goto(`${app.origin}/users/`);
            await page.waitForURL(/\/users\/login$/);
          },
        );

        await t.step("an account made through a provider sets its first password", async () => {
          const fresh = await context(browser, js);
          const p = await fresh.newPage();
          await p.goto(`${app.origin}/users/login`);
          await p.getByRole("link", { name: "Continue with GitHub" }).click();
          await consent(p, `octo.${mode}@example.com`);
          await p.waitForURL(/\/users\/$/);
          await p.getByRole("heading", { name: "Password", exact: true }).waitFor();
          assert.match(await p.locator("main").textContent() ?? "", /You sign in with GitHub/);
          assert.match(
            await p.locator("main").textContent() ?? "",
            /GitHub \(octo\.\w+@example\.com\), linked just now/,
          );
          await p.getByLabel("New password").fill("octo's own passphrase");
          await p.getByRole("button", { name: "Set a password" }).click();
          await p.getByRole("status").filter({ hasText: "Your password was set" }).waitFor();
          await fresh.close();
          const again = await context(browser, js);
          const q = await again.newPage();
          await q.goto(`${app.origin}/users/login`);
          await q.getByLabel("E-mail").fill(`octo.${mode}@example.com`);
          await q.getByLabel("Password").fill("octo's own passphrase");
          await q.getByRole("button", { name: "Sign in" }).click();
          await q.waitForURL(/\/users\/$/);
          await again.close();
        });
        await ctx.close();
      } finally {
        await browser.close();
        await app.close();
      }
    },
  });
}
