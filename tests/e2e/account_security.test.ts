/**
 * The account page's security actions in Chromium, on the multi-user site over libSQL and
 * over D1 (Miniflare): new backup codes (the old ones then refused at sign-in), a passkey
 * renamed, this session named and another one ended (that browser signed out), and "confirm
 * it's you" in a session older than 5 minutes (made by the site's own session flow at that
 * time): a change is refused until the password is entered again, then allowed.
 */
import assert from "node:assert/strict";
import type { BrowserContext, Page } from "playwright-core";
import { getUserByEmail } from "../../d1.ts";
import { HAVE_CHROMIUM, launch, where } from "./_harness.ts";
import { checkPage } from "./_console.ts";
import { newestCode } from "./_users_site.ts";
import { type Backend, desktop, startFactorsSite, virtualAuthenticator } from "./_factors_site.ts";
import { appCode } from "../d1/_totp.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts
const PASSWORD = "account security passphrase";

async function signUp(page: Page, origin: string, direct: string, email: string): Promise<void> {
  await page.goto(`${origin}/users/signup`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.waitForURL(/\/users\/verify\?email=/);
  await page.getByLabel("Code").fill(await newestCode(direct, email));
  await page.getByRole("button", { name: "Verify" }).click();
  await page.waitForURL(/\/users\/$/);
}

/** The password, then `code` at the second step; resolves once the page answered. */
async function signInWith(page: Page, origin: string, email: string, code: string) {
  await page.goto(`${origin}/users/login`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.waitForURL(/\/users\/second-factor$/);
  await page.getByLabel("Code", { exact: true }).fill(code);
  await page.getByRole("button", { name: "Continue" }).click();
}

/** The backup codes the page shows. */
async function backupCodes(page: Page): Promise<string[]> {
  const items = page.getByRole("list", { name: "Backup codes" }).getByRole("listitem");
  await items.first().waitFor();
  return await items.allTextContents();
}

/** A browser holding a session of `userId` that the site made `minutes` ago. */
async function olderSession(
  ctx: BrowserContext,
  site: Awaited<ReturnType<typeof startFactorsSite>>,
  userId: string,
  minutes: number,
): Promise<void> {
  const c = await site.sessionAt(userId, Date.now() - minutes * 60_000);
  await ctx.addCookies([{ ...c, domain: "localhost", path: "/", secure: true, httpOnly: true }]);
}

for (const backend of ["libsql", "d1"] as Backend[]) {
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e account security (${backend}): new backup codes, a passkey renamed, a session named and one ended, confirm it's you`,
    ...opts,
    async fn() {
      const site = await startFactorsSite(backend);
      const browser = await launch();
      try {
        const ctx = await desktop(browser, true);
        const page = await ctx.newPage();
        await virtualAuthenticator(page);
        const email = `sec-${backend}-${crypto.randomUUID().slice(0, 8)}@example.com`;
        await signUp(page, site.origin, site.direct, email);

        // An authenticator app, then new backup codes in place of the first ones.
        await page.getByRole("link", { name: "Set up an authenticator app" }).click();
        await page.waitForURL(/\/users\/account\/totp$/);
        const key = await page.locator("[data-totp-key]").getAttribute("data-totp-key") ?? "";
        await page.getByLabel("Code from the app").fill(appCode(key, Date.now()));
        await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
        const first = await backupCodes(page);
        await page.getByRole("link", { name: "I have kept them: continue" }).click();
        await page.waitForURL(/\/users\/$/);
        await page.getByRole("button", { name: "New backup codes" }).click();
        await page.waitForURL(/\/users\/account\/backup-codes$/);
        const fresh = await backupCodes(page);
        assert.equal(fresh.length, 10);
        assert.deepEqual(fresh.filter((c) => first.includes(c)), [], "all ten are new");
        await checkPage(page, `security-new-backup-codes-${backend}`, {
          javaScript: true,
          everyImpact: true,
        });
        await page.getByRole("link", { name: "I have kept them: continue" }).click();
        await page.waitForURL(/\/users\/$/);
        assert.equal(await page.locator("#backup-left").textContent(), "10");

        // A passkey, renamed.
        await page.getByLabel("Passkey label (optional)").fill("Laptop");
        await page.getByRole("button", { name: "Add a passkey" }).click();
        await page.waitForURL(/done=passkey_added/);
        const passkeys = page.getByRole("region", { name: "Your passkeys" });
        await passkeys.getByLabel("Passkey label: Laptop").fill("Phone");
        await passkeys.getByRole("button", { name: "Rename" }).click();
        await page.waitForURL(/done=passkey_renamed/);
        await page.getByText("The passkey was renamed.").waitFor();
        assert.equal(await passkeys.getByLabel("Passkey label: Phone").inputValue(), "Phone");

        // Another browser: an old backup code is refused, a new one signs in.
        const other = await desktop(browser, true);
        const second = await other.newPage();
        await signInWith(second, site.origin, email, first[0]);
        await second.getByRole("alert").getByText("That code is not right").waitFor();
        await second.getByLabel("Code", { exact: true }).fill(fresh[0]);
        await second.getByRole("button", { name: "Continue" }).click();
        await second.waitForURL(/\/users\/$/);

        // This session named; the other one ended, and that browser signed out.
        await page.goto(`${site.origin}/users/`);
        const sessions = page.getByRole("region", { name: "Where you are signed in" });
        assert.equal(await sessions.getByRole("row").count(), 3);
        await sessions.getByLabel("What to call this device").fill("Work laptop");
        await sessions.getByRole("button", { name: "Label it" }).click();
        await page.waitForURL(/done=session_renamed/);
        await page.getByText("This session's name was saved.").waitFor();
        assert.match(await sessions.textContent() ?? "", /Work laptop · .*This device/);
        await sessions.getByRole("button", { name: "End", exact: true }).click();
        await page.waitForURL(/done=session_ended/);
        await page.getByText("That session was ended: the device is signed out.").waitFor();
        assert.equal(await sessions.getByRole("row").count(), 2, "a header and this session");
        await second.goto(`${site.origin}/users/`);
        assert.equal(where(second), "/users/login", "the ended session is signed out");

        // A session signed in 10 minutes ago must confirm before it turns two-step off.
        const found = await getUserByEmail(site.db, email);
        assert.ok(found.ok);
        const stale = await desktop(browser, true);
        await olderSession(stale, site, found.user.id, 10);
        const old = await stale.newPage();
        await old.goto(`${site.origin}/users/`);
        assert.equal(where(old), "/users/");
        const confirm = old.getByRole("region", { name: "Confirm it's you" });
        await confirm.waitFor();
        await checkPage(old, `security-confirm-${backend}`, {
          javaScript: true,
          everyImpact: true,
        });
        assert.equal(await page.getByRole("region", { name: "Confirm it's you" }).count(), 0);
        await old.getByRole("button", { name: "Turn off two-step sign-in" }).click();
        await old.waitForURL(/error=reauth_required/);
        await old.getByText("Confirm it's you first (just below), then try again.").waitFor();
        assert.equal(await old.locator("#backup-left").textContent(), "9", "still on");
        await confirm.getByLabel("Password").fill("not the password at all");
        await confirm.getByRole("button", { name: "Confirm" }).click();
        await old.waitForURL(/error=wrong_password/);
        await old.getByText("Your current password is not right.").waitFor();
        await confirm.getByLabel("Password").fill(PASSWORD);
        await confirm.getByRole("button", { name: "Confirm" }).click();
        await old.waitForURL(/done=confirmed/);
        await old.getByText("Thanks: you can make changes for the next 5 minutes.").waitFor();
        assert.equal(await confirm.count(), 0, "the confirmation is no longer asked for");
        await old.getByRole("button", { name: "Turn off two-step sign-in" }).click();
        await old.waitForURL(/done=totp_removed/);
        assert.equal(
          await old.getByRole("link", { name: "Set up an authenticator app" }).count(),
          1,
        );
      } finally {
        await browser.close();
        await site.close();
      }
    },
  });
}
