/**
 * Passkeys in Chromium with the Chrome DevTools Protocol's virtual authenticator (resident
 * keys, user verification), on the multi-user site over libSQL and over D1 (Miniflare):
 * adding a passkey from the account page, usernameless sign-in (no e-mail typed: the
 * discoverable credential names the account), its last use shown, removal (the server then
 * refuses the credential the authenticator still holds), and never removing the last way in
 * of a passkey-only account. With JavaScript off the login page shows no passkey button and
 * the password form signs in.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { HAVE_CHROMIUM, launch, where } from "./_harness.ts";
import { checkPage } from "./_console.ts";
import { newestCode } from "./_users_site.ts";
import { type Backend, desktop, startFactorsSite, virtualAuthenticator } from "./_factors_site.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts
const PASSWORD = "passkey test passphrase";

/** Signs up `email` through the pages and verifies it: the page ends on the account. */
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

async function signOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/users\/login\?signed_out=1$/);
  await page.getByText("You are signed out.").waitFor();
}

for (const backend of ["libsql", "d1"] as Backend[]) {
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e passkeys (${backend}): add, usernameless sign-in, last use, removal, never the last way in`,
    ...opts,
    async fn() {
      const site = await startFactorsSite(backend);
      const browser = await launch();
      try {
        const ctx = await desktop(browser, true);
        const page = await ctx.newPage();
        const auth = await virtualAuthenticator(page);
        const email = `pk-${backend}-${crypto.randomUUID().slice(0, 8)}@example.com`;
        await signUp(page, site.origin, site.direct, email);

        // Add a passkey (the form shows once the page's script runs in a WebAuthn browser).
        await page.getByLabel("Passkey label (optional)").fill("Test laptop");
        await page.getByRole("button", { name: "Add a passkey" }).click();
        await page.waitForURL(/done=passkey_added/);
        const table = page.getByRole("region", { name: "Your passkeys" });
        assert.equal(
          await table.getByLabel("Passkey label: Test laptop").inputValue(),
          "Test laptop",
        );
        assert.match(await table.textContent() ?? "", /Never/);
        const held = await auth.credentials();
        assert.equal(held.length, 1);
        assert.equal(held[0].isResidentCredential, true);
        assert.equal(held[0].rpId, "localhost");
        await checkPage(page, `passkeys-account-${backend}`, {
          javaScript: true,
          everyImpact: true,
        });

        // Usernameless, through the autofill list: the login page's e-mail field offers the
        // passkeys (conditional mediation); the virtual authenticator picks the one it holds
        // at once, and the page signs in with no e-mail typed.
        const login = await (await fetch(`${site.direct}/users/login`)).text();
        assert.match(login, /autocomplete="username webauthn"/);
        // Signed out, the login page may sign in again before its load event: wait only for
        // the account page (this page's URL carries `?done=` until then).
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.waitForURL(/\/users\/$/);
        assert.match(await page.textContent("body") ?? "", new RegExp(`Signed in as ${email}`));
        assert.doesNotMatch(await table.textContent() ?? "", /Never/, "the last use is shown");
        assert.equal((await auth.credentials())[0].signCount, 2);

        // Usernameless, by the button: a browser without autofill for passkeys.
        await ctx.addInitScript(() => {
          // deno-lint-ignore no-explicit-any
          (globalThis as any).PublicKeyCredential.isConditionalMediationAvailable = () =>
            Promise.resolve(false);
        });
        await signOut(page);
        assert.equal(await page.getByLabel("E-mail").inputValue(), "");
        await checkPage(page, `passkeys-login-${backend}`, { javaScript: true, everyImpact: true });
        await page.getByRole("button", { name: "Use a passkey" }).click();
        await page.waitForURL(/\/users\/$/);
        assert.equal((await auth.credentials())[0].signCount, 3);

        // Removal: the site forgets it; the authenticator's copy no longer signs in.
        await table.getByRole("button", { name: "Remove" }).click();
        await page.waitForURL(/done=passkey_removed/);
        assert.match(await page.textContent("body") ?? "", /No passkey yet/);
        await signOut(page);
        await page.getByRole("button", { name: "Use a passkey" }).click();
        await page.getByRole("alert").getByText("That passkey could not be checked").waitFor();
        assert.equal(where(page), "/users/login?signed_out=1"); // no sign-in happened

        // A passkey-only account: its last passkey stays.
        await page.getByLabel("E-mail").fill(email);
        await page.getByLabel("Password").fill(PASSWORD);
        await page.getByRole("button", { name: "Sign in", exact: true }).click();
        await page.waitForURL(/\/users\/$/);
        await page.getByRole("button", { name: "Add a passkey" }).click();
        await page.waitForURL(/done=passkey_added/);
        await page.getByRole("button", { name: "Remove my password (passkeys only)" }).click();
        await page.waitForURL(/done=password_removed/);
        await table.getByRole("button", { name: "Remove" }).click();
        await page.waitForURL(/error=last_method/);
        await page.getByRole("alert").getByText("This is your only way to sign in").waitFor();
        await signOut(page);
        await page.getByLabel("E-mail").fill(email);
        await page.getByLabel("Password").fill(PASSWORD);
        await page.getByRole("button", { name: "Sign in", exact: true }).click();
        await page.getByRole("alert").getByText("don't match an account").waitFor();
        await page.getByRole("button", { name: "Use a passkey" }).click();
        await page.waitForURL(/\/users\/$/);

        // JavaScript off: no passkey button; the password form is the way in.
        const off = await desktop(browser, false);
        const plain = await off.newPage();
        await plain.goto(`${site.origin}/users/login`);
        assert.equal(await plain.getByRole("button", { name: "Use a passkey" }).count(), 0);
        await checkPage(plain, `passkeys-login-nojs-${backend}`, {
          javaScript: false,
          everyImpact: true,
        });
      } finally {
        await browser.close();
        await site.close();
      }
    },
  });
}
