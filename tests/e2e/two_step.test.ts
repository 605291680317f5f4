/**
 * Two-step sign-in and the sessions list in Chromium, on the multi-user site over libSQL and
 * over D1 (Miniflare), with JavaScript on and off: setting up an authenticator app from the
 * QR page (the codes come from an implementation of RFC 6238 in the test, over
 * `node:crypto`, not from the code under test, and checked first against RFC 6238's SHA-1
 * test vectors), the 10 backup codes shown once, signing in with a code, with a backup code
 * (used once), "remember this device"; then the sessions of the account listed with their
 * device, another one ended, and that browser signed out.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { HAVE_CHROMIUM, launch, where } from "./_harness.ts";
import { checkPage } from "./_console.ts";
import { newestCode } from "./_users_site.ts";
import { type Backend, desktop, startFactorsSite } from "./_factors_site.ts";
import { appCode, keyOfUri } from "../d1/_totp.ts";
import { readQr } from "./_qr.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts
const PASSWORD = "two step test passphrase";

// The browser tests trust the test's own authenticator app: it is checked first, without a
// browser, against the SHA-1 test vectors of RFC 6238 (appendix B: the seed is the ASCII of
// "12345678901234567890", base32 below; 8-digit codes, 30-second steps).
Deno.test("the tests' authenticator app gives the SHA-1 codes of RFC 6238's test vectors", () => {
  const seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
  const vectors: [number, string][] = [
    [59, "94287082"],
    [1111111109, "07081804"],
    [1111111111, "14050471"],
    [1234567890, "89005924"],
    [2000000000, "69279037"],
    [20000000000, "65353130"],
  ];
  for (const [seconds, code] of vectors) {
    assert.equal(appCode(seed, seconds * 1000, 8), code, `at ${seconds} s`);
    assert.equal(appCode(seed, seconds * 1000), code.slice(2), `6 digits at ${seconds} s`);
  }
});

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

async function signIn(page: Page, origin: string, email: string): Promise<void> {
  await page.goto(`${origin}/users/login`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/users\/login\?signed_out=1$/);
  await page.getByText("You are signed out.").waitFor();
}

for (const backend of ["libsql", "d1"] as Backend[]) {
  for (const js of [true, false]) {
    const mode = js ? "js" : "nojs";
    Deno.test({
      ignore: !HAVE_CHROMIUM,
      name:
        `e2e two-step sign-in (${backend}, ${mode}): TOTP set-up and sign-in, backup codes, remembered device, sessions list and revoke`,
      ...opts,
      async fn() {
        const site = await startFactorsSite(backend);
        const browser = await launch();
        try {
          const ctx = await desktop(browser, js);
          const page = await ctx.newPage();
          const email = `totp-${backend}-${mode}-${crypto.randomUUID().slice(0, 8)}@example.com`;
          await signUp(page, site.origin, site.direct, email);

          // Set up: the QR code and the key; a first code from the "app".
          await page.getByRole("link", { name: "Set up an authenticator app" }).click();
          await page.waitForURL(/\/users\/account\/totp$/);
          const qr = page.getByRole("img", { name: "QR code to scan with an authenticator app" });
          assert.match(await qr.getAttribute("src") ?? "", /^data:image\/svg\+xml;base64,/);
          const shown = await page.locator("[data-totp-key]").getAttribute("data-totp-key") ?? "";
          assert.match(shown, /^[A-Z2-7]{32}$/);
          // The QR code as drawn, read by a QR reader: the otpauth URI of this account and key.
          const uri = await readQr(qr);
          const app = encodeURIComponent("Gatehouse multi-user demo");
          assert.equal(
            uri,
            `otpauth://totp/${app}:${encodeURIComponent(email)}?secret=${shown}&issuer=${app}`,
          );
          const key = keyOfUri(uri); // the "app" scanned it: its codes come from the QR's key
          await checkPage(page, `totp-setup-${backend}-${mode}`, {
            javaScript: js,
            everyImpact: true,
          });
          await page.getByLabel("Code from the app").fill(appCode(key, Date.now()));
          await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
          const codes = page.getByRole("list", { name: "Backup codes" }).getByRole("listitem");
          await codes.first().waitFor();
          const backup = await codes.allTextContents();
          assert.equal(backup.length, 10);
          for (const c of backup) assert.match(c, /^[0-9a-z]{5}-[0-9a-z]{5}$/);
          const download = page.getByRole("link", { name: "Download the codes" });
          assert.match(await download.getAttribute("href") ?? "", /^data:text\/plain/);
          assert.equal(await download.getAttribute("download"), "backup-codes.txt");
          assert.equal(
            await page.getByRole("button", { name: "Print the codes" }).isVisible(),
            js,
            "print needs JavaScript",
          );
          await checkPage(page, `totp-backup-codes-${backend}-${mode}`, {
            javaScript: js,
            everyImpact: true,
          });
          await page.getByRole("link", { name: "I have kept them: continue" }).click();
          await page.waitForURL(/\/users\/$/);
          assert.equal(await page.locator("#backup-left").textContent(), "10");

          // Sign in: the password, then the code (the next step's: each code works once and
          // the set-up used this step's).
          await signOut(page);
          await signIn(page, site.origin, email);
          await page.waitForURL(/\/users\/second-factor$/);
          await checkPage(page, `totp-second-factor-${backend}-${mode}`, {
            javaScript: js,
            everyImpact: true,
          });
          await page.getByLabel("Code", { exact: true }).fill("000000");
          await page.getByRole("button", { name: "Continue" }).click();
          await page.getByRole("alert").getByText("That code is not right").waitFor();
          await page.getByLabel("Code", { exact: true }).fill(appCode(key, Date.now() + 30_000));
          await page.getByRole("button", { name: "Continue" }).click();
          await page.waitForURL(/\/users\/$/);

          // A backup code, once; this time the device is remembered.
          await signOut(page);
          await signIn(page, site.origin, email);
          await page.waitForURL(/\/users\/second-factor$/);
          await page.getByLabel("Code", { exact: true }).fill(backup[0]);
          await page.getByLabel("Remember this device for 30 days").check();
          await page.getByRole("button", { name: "Continue" }).click();
          await page.waitForURL(/\/users\/$/);
          assert.equal(await page.locator("#backup-left").textContent(), "9");
          await signOut(page);
          await signIn(page, site.origin, email);
          await page.waitForURL(/\/users\/$/);
          assert.equal(where(page), "/users/", "a remembered device skips the code");

          // The same backup code in another browser (not remembered) is refused.
          const other = await desktop(browser, js);
          const second = await other.newPage();
          await signIn(second, site.origin, email);
          await second.waitForURL(/\/users\/second-factor$/);
          await second.getByLabel("Code", { exact: true }).fill(backup[0]);
          await second.getByRole("button", { name: "Continue" }).click();
          await second.getByRole("alert").getByText("That code is not right").waitFor();
          await second.getByLabel("Code", { exact: true }).fill(backup[1]);
          await second.getByRole("button", { name: "Continue" }).click();
          await second.waitForURL(/\/users\/$/);

          // Sessions: both browsers are listed, this one marked; ending the other signs it out.
          await page.reload();
          const sessions = page.getByRole("region", { name: "Where you are signed in" });
          const rows = sessions.getByRole("row");
          assert.equal(await rows.count(), 3, "a header and the two live sessions");
          assert.match(await sessions.textContent() ?? "", /This device/);
          assert.match(await sessions.textContent() ?? "", /Chrome on Linux/);
          await checkPage(page, `sessions-${backend}-${mode}`, {
            javaScript: js,
            everyImpact: true,
          });
          await page.getByRole("button", { name: "End all other sessions" }).click();
          await page.waitForURL(/done=others_ended/);
          assert.equal(await sessions.getByRole("row").count(), 2);
          await second.goto(`${site.origin}/users/`);
          assert.equal(where(second), "/users/login", "the other browser was signed out");
          await page.goto(`${site.origin}/users/`);
          assert.equal(where(page), "/users/", "this browser stays signed in");
        } finally {
          await browser.close();
          await site.close();
        }
      },
    });
  }
}

for (const js of [true, false]) {
  const mode = js ? "js" : "nojs";
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e two-step set-up (libsql, ${mode}): a wrong code keeps the key and QR code already scanned`,
    ...opts,
    async fn() {
      const site = await startFactorsSite("libsql");
      const browser = await launch();
      try {
        const page = await (await desktop(browser, js)).newPage();
        const email = `totp-again-${mode}-${crypto.randomUUID().slice(0, 8)}@example.com`;
        await signUp(page, site.origin, site.direct, email);
        await page.getByRole("link", { name: "Set up an authenticator app" }).click();
        await page.waitForURL(/\/users\/account\/totp$/);
        const qr = page.getByRole("img", { name: "QR code to scan with an authenticator app" });
        const src = await qr.getAttribute("src") ?? "";
        const key = await page.locator("[data-totp-key]").getAttribute("data-totp-key") ?? "";
        assert.match(key, /^[A-Z2-7]{32}$/);
        // A code the app does not show now (a typo): refused, and the same key stays.
        const wrong = appCode(key, Date.now() + 10 * 60_000);
        await page.getByLabel("Code from the app").fill(wrong);
        await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
        await page.getByRole("alert").getByText("That code is not right").waitFor();
        assert.equal(
          await page.locator("[data-totp-key]").getAttribute("data-totp-key"),
          key,
          "the key shown again is the one scanned",
        );
        assert.equal(await qr.getAttribute("src"), src, "the QR code is the same");
        // The app's code for the key scanned first turns it on.
        await page.getByLabel("Code from the app").fill(appCode(key, Date.now()));
        await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
        const codes = page.getByRole("list", { name: "Backup codes" }).getByRole("listitem");
        await codes.first().waitFor();
        assert.equal(await codes.count(), 10);
      } finally {
        await browser.close();
        await site.close();
      }
    },
  });
}
