/**
 * The React build's passkey and second-factor pages in Chromium, on a site where React 19
 * renders and hydrates them and the `/d1` flows answer (`hydration/factors_site.tsx`, libSQL
 * on a temp file), with the Chrome DevTools Protocol's virtual authenticator: with JavaScript
 * on, `PasskeyRegister` adds a passkey, `TotpSetupPage` turns on an authenticator app (its
 * QR code read by a QR reader) and shows the backup codes in place, `SecondFactorPage`
 * shows a wrong code inline without a page load and signs in with the right one, and
 * `PasskeySignIn` signs in from the e-mail field's autofill; with JavaScript off the pages are
 * plain forms that post and come back (no passkey button, no print button). axe-core (every
 * impact) and a screenshot at 1280 and 390 px on each page, and no warning from React.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "playwright-core";
import { HAVE_CHROMIUM, launch, where } from "./_harness.ts";
import { checkPage } from "./_console.ts";
import { desktop, virtualAuthenticator } from "./_factors_site.ts";
import { readQr } from "./_qr.ts";
import { appCode, keyOfUri } from "../d1/_totp.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts
const PASSWORD = "react factor pages passphrase"; // factors_site.tsx's account
const EMAIL = "ada@example.com";

const siteFile = new URL("./hydration/factors_site.tsx", import.meta.url).pathname;

/** React 19's import map of the React tests, plus the packages `/d1` imports, as absolute URLs. */
async function importMap(file: string): Promise<void> {
  const react = new URL("../react/react19.importmap.json", import.meta.url);
  const tests = new URL("../deno.json", import.meta.url);
  const map = JSON.parse(await Deno.readTextFile(react)).imports as Record<string, string>;
  const config = JSON.parse(await Deno.readTextFile(tests)).imports as Record<string, string>;
  const imports: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) {
    imports[k] = v.startsWith("npm:") ? v : new URL(v, react).href;
  }
  for (const k of ["@libsql/client", "@simplewebauthn/server", "lean-qr", "lean-qr/"]) {
    imports[k] = config[k];
  }
  imports["@gatehouse/gatehouse/d1"] = new URL("../../d1.ts", import.meta.url).href;
  await Deno.writeTextFile(file, JSON.stringify({ imports }));
}

interface Site {
  origin: string;
  close(): Promise<void>;
}

async function startSite(): Promise<Site> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-react-factors-" });
  const map = `${dir}/importmap.json`;
  await importMap(map);
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--check",
      "-A",
      "--no-config",
      "--import-map",
      map,
      siteFile,
      map,
      `file:${dir}/site.db`,
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += value;
  }
  const close = async () => {
    try {
      child.kill();
    } catch {
      // already gone
    }
    await reader.cancel();
    await child.status;
    await Deno.remove(dir, { recursive: true });
  };
  const [, origin, version] = seen.match(/listening (http:\/\/\S+) (\S+)/) ?? [];
  if (!origin || !version.startsWith("19.")) {
    await close();
    throw new Error(`the React factor site did not start on React 19: ${seen}`);
  }
  return { origin, close };
}

/** A page that records React's and the browser's warnings (4xx answers are expected). */
async function watched(browser: Browser, js: boolean): Promise<{ page: Page; problems: string[] }> {
  const page = await (await desktop(browser, js)).newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.text().startsWith("Failed to load resource")) return;
    if (m.type() === "error" || m.type() === "warning") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  return { page, problems };
}

const hydrated = (page: Page) =>
  page.locator("html[data-hydrated=react]").waitFor({ state: "attached" });

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name:
    "e2e React build (js): PasskeyRegister, TotpSetupPage with its QR code, BackupCodesPage, SecondFactorPage and PasskeySignIn on the /d1 flows",
  ...opts,
  async fn() {
    const site = await startSite();
    const browser = await launch();
    try {
      const { page, problems } = await watched(browser, true);
      const auth = await virtualAuthenticator(page);
      // No autofill at first: the password signs in (the button is there, unused).
      await page.addInitScript(() => {
        // deno-lint-ignore no-explicit-any
        const pkc = (globalThis as any).PublicKeyCredential;
        if (!sessionStorage.getItem("autofill")) {
          pkc.isConditionalMediationAvailable = () => Promise.resolve(false);
        }
      });
      await page.goto(`${site.origin}/login`);
      await hydrated(page);
      await page.getByRole("button", { name: "Use a passkey" }).waitFor();
      await checkPage(page, "react-login", { javaScript: true, everyImpact: true });
      await page.getByLabel("E-mail").fill(EMAIL);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL(/\/account$/);

      // PasskeyRegister (React): a passkey with a label, made by the virtual authenticator.
      await hydrated(page);
      await page.getByLabel("Passkey label (optional)").fill("React laptop");
      await page.getByRole("button", { name: "Add a passkey" }).click();
      await page.waitForURL(/\/account\?added=1$/);
      await page.getByRole("list", { name: "Your passkeys" }).getByText("React laptop").waitFor();
      assert.equal((await auth.credentials()).length, 1);

      // TotpSetupPage: the QR code read off the screen; the backup codes replace the form.
      await page.getByRole("link", { name: "Set up an authenticator app" }).click();
      await page.waitForURL(/\/totp-setup$/);
      await hydrated(page);
      await checkPage(page, "react-totp-setup", { javaScript: true, everyImpact: true });
      const qr = page.getByRole("img", { name: "QR code to scan with an authenticator app" });
      const uri = await readQr(qr);
      const key = keyOfUri(uri);
      assert.match(uri, /^otpauth:\/\/totp\/React%20factor%20site:ada%40example\.com\?secret=/);
      let loads = 0;
      page.on("load", () => loads++);
      await page.getByLabel("Code from the app").fill("000000");
      await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
      await page.getByRole("alert").getByText("That code is not right").waitFor();
      await page.getByLabel("Code from the app").fill(appCode(key, Date.now()));
      await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
      const codes = page.getByRole("list", { name: "Backup codes" }).getByRole("listitem");
      await codes.first().waitFor();
      assert.equal(await codes.count(), 10);
      assert.equal(loads, 0, "the codes came in place, without a page load");
      assert.equal(await page.getByRole("button", { name: "Print the codes" }).isVisible(), true);
      await checkPage(page, "react-backup-codes", { javaScript: true, everyImpact: true });

      // SecondFactorPage: a wrong code inline, the next step's code signs in.
      await page.context().clearCookies();
      await page.goto(`${site.origin}/login`);
      await hydrated(page);
      await page.getByLabel("E-mail").fill(EMAIL);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL(/\/second-factor$/);
      await hydrated(page);
      loads = 0;
      await page.getByLabel("Code", { exact: true }).fill("000000");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByRole("alert").getByText("That code is not right").waitFor();
      assert.equal(loads, 0, "the error came in place");
      await checkPage(page, "react-second-factor-error", { javaScript: true, everyImpact: true });
      await page.getByLabel("Code", { exact: true }).fill(appCode(key, Date.now() + 30_000));
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/account$/);

      // PasskeySignIn: from the e-mail field's autofill, no e-mail typed, no second step.
      await page.context().clearCookies();
      await page.evaluate(() => sessionStorage.setItem("autofill", "1"));
      await page.goto(`${site.origin}/login`);
      await page.waitForURL(/\/account$/);
      assert.equal((await auth.credentials())[0].signCount, 2, "made, then used once");
      assert.deepEqual(problems, [], "React and the browser reported no problem");
    } finally {
      await browser.close();
      await site.close();
    }
  },
});

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name:
    "e2e React build (nojs): the login, second-factor, TOTP set-up and backup-code pages are plain forms that post",
  ...opts,
  async fn() {
    const site = await startSite();
    const browser = await launch();
    try {
      const { page } = await watched(browser, false);
      await page.goto(`${site.origin}/login`);
      assert.equal(await page.getByRole("button", { name: "Use a passkey" }).isVisible(), false);
      await checkPage(page, "react-login-nojs", { javaScript: false, everyImpact: true });
      await page.getByLabel("E-mail").fill(EMAIL);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL(/\/account$/);
      await page.getByRole("link", { name: "Set up an authenticator app" }).click();
      await page.waitForURL(/\/totp-setup$/);
      await checkPage(page, "react-totp-setup-nojs", { javaScript: false, everyImpact: true });
      const qr = page.getByRole("img", { name: "QR code to scan with an authenticator app" });
      await page.getByLabel("Code from the app").fill("000000");
      await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
      await page.waitForURL(/\/totp-setup\?error=invalid_code$/);
      await page.getByRole("alert").getByText("That code is not right").waitFor();
      // The page came back with a set-up of its own (the site starts one per GET): scan it.
      const key = keyOfUri(await readQr(qr));
      await page.getByLabel("Code from the app").fill(appCode(key, Date.now()));
      await page.getByRole("button", { name: "Turn on two-step sign-in" }).click();
      await page.waitForURL(/\/api\/auth\/totp\/confirm$/);
      const codes = page.getByRole("list", { name: "Backup codes" }).getByRole("listitem");
      assert.equal(await codes.count(), 10);
      assert.equal(await page.getByRole("button", { name: "Print the codes" }).isVisible(), false);
      assert.match(
        await page.getByRole("link", { name: "Download the codes" }).getAttribute("href") ?? "",
        /^data:text\/plain/,
      );
      await checkPage(page, "react-backup-codes-nojs", { javaScript: false, everyImpact: true });

      await page.context().clearCookies();
      await page.goto(`${site.origin}/login`);
      await page.getByLabel("E-mail").fill(EMAIL);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await page.waitForURL(/\/second-factor$/);
      await page.getByLabel("Code", { exact: true }).fill("000000");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/second-factor\?error=invalid_code$/);
      await page.getByRole("alert").getByText("That code is not right").waitFor();
      await checkPage(page, "react-second-factor-nojs", { javaScript: false, everyImpact: true });
      await page.getByLabel("Code", { exact: true }).fill(appCode(key, Date.now() + 30_000));
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/account$/);
      assert.equal(where(page), "/account");
    } finally {
      await browser.close();
      await site.close();
    }
  },
});
