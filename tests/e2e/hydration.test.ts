/**
 * The pages inside a real React 18 app, a real React 19 app and real Preact 10 and 11 apps
 * (`tests/e2e/hydration/`), each server-rendered and hydrated by its own runtime, and the same
 * pages served as whole documents by the React build's `renderAuthDocument` and hydrated by its
 * `hydrateAuthPage` under React 18 and React 19, and a Deno app on React 18 with the React
 * build as JSR serves it (`hydration/jsr_form.ts`), in headless Chromium: with JavaScript off
 * every site serves the same DOM and every form (sign-in, sign-up, verify, forgot, reset) posts
 * and comes back with errors in words or goes on; with JavaScript on the forms show errors
 * inline without a page load and hand success answers to `onSuccess`, with no warning from the
 * runtime.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { context, HAVE_CHROMIUM, launch, shot } from "./_harness.ts";
import { buildJsrForm, denoReact18Map } from "./hydration/jsr_form.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts

/** `react`/`preact`: a test app around the components; `document`: the document helpers. */
type Runtime = "react" | "preact" | "document";

interface Site {
  name: string;
  runtime: Runtime;
  origin: string;
  close(): Promise<void>;
}

const configs = new URL("../react/", import.meta.url);
const siteFile = new URL("./hydration/site.tsx", import.meta.url).pathname;

/**
 * Starts `hydration/site.tsx` for a runtime under a React version's import map (or `map`); a
 * Preact site under the React 19 map runs Preact 11, under `preact10.importmap.json` Preact 10.
 */
async function startSite(
  name: string,
  runtime: Runtime,
  major: 18 | 19,
  map = new URL(`react${major}.importmap.json`, configs).pathname,
  preact: 10 | 11 = 11,
): Promise<Site> {
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
      runtime,
      map,
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
  const [, origin, version] = seen.match(/listening (http:\/\/\S+) (\S+)/) ?? [];
  const expected = runtime === "preact" ? `preact${preact}` : `${major}.`;
  if (!origin || !version.startsWith(expected)) {
    child.kill();
    await child.status;
    throw new Error(`${name} site did not start with ${expected}: ${seen}`);
  }
  return {
    name,
    runtime,
    origin,
    async close() {
      child.kill();
      await reader.cancel();
      await child.status;
    },
  };
}

/**
 * A Deno app on React 18 with the React build as JSR serves it (React 19 pinned) and the
 * import map entries docs/react.md gives for that (`hydration/jsr_form.ts`).
 */
async function startJsrSite(): Promise<Site> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-jsr-form-" });
  try {
    const { react } = await buildJsrForm(dir);
    const map = await denoReact18Map(`${dir}/importmap.json`, react, true);
    const site = await startSite("React 18 app, JSR package", "react", 18, map);
    return {
      ...site,
      async close() {
        await site.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  } catch (e) {
    await Deno.remove(dir, { recursive: true });
    throw e;
  }
}

async function startSites(): Promise<Site[]> {
  return await Promise.all([
    startSite("React 18", "react", 18),
    startSite("React 19", "react", 19),
    startSite("Preact 11", "preact", 19),
    startSite(
      "Preact 10",
      "preact",
      19,
      new URL("preact10.importmap.json", configs).pathname,
      10,
    ),
    startSite("React 18 document", "document", 18),
    startSite("React 19 document", "document", 19),
    startJsrSite(),
  ]);
}

/**
 * The DOM of the page as the parser built it (tags, sorted attributes, text): the children of
 * the app's `#app`, or of the document's `#gatehouse-auth`.
 */
function domOf(page: Page, site: Site): Promise<string[]> {
  const holder = site.runtime === "document" ? "gatehouse-auth" : "app";
  return page.evaluate((holder) => {
    const out: string[] = [];
    const walk = (n: Node) => {
      if (n.nodeType === Node.TEXT_NODE) out.push(`text ${JSON.stringify(n.textContent)}`);
      if (n.nodeType !== Node.ELEMENT_NODE) return;
      const el = n as Element;
      const attrs = [...el.attributes].map((a) => {
        const value = a.name === "style" ? (el as HTMLElement).style.cssText : a.value;
        return `${a.name}=${JSON.stringify(value)}`;
      }).sort();
      out.push(`<${el.localName} ${attrs.join(" ")}>`);
      el.childNodes.forEach(walk);
      out.push(`</${el.localName}>`);
    };
    const root = document.getElementById(holder)!;
    root.normalize();
    root.childNodes.forEach(walk);
    return out;
  }, holder);
}

/** Every form posted the plain way (JavaScript off): errors come back in words, success goes on. */
async function plainPosts(page: Page, s: Site): Promise<void> {
  const at = (path: string) => page.waitForURL(`${s.origin}${path}`);
  const alert = async () => await page.getByRole("alert").textContent() ?? "";

  await page.goto(`${s.origin}/login`);
  await page.getByLabel("E-mail").fill("ada@example.com");
  await page.getByLabel("Password").fill("wrong password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await at("/login?error=invalid_credentials");
  assert.match(await alert(), /don't match an account/, s.name);
  assert.equal(await page.locator("html[data-hydrated]").count(), 0, `${s.name}: no JS ran`);
  await page.getByLabel("E-mail").fill("ada@example.com");
  await page.getByLabel("Password").fill("right password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await at("/welcome");

  await page.goto(`${s.origin}/signup`);
  await page.getByLabel("E-mail").fill("taken@example.com");
  await page.getByLabel("Password").fill("long enough password");
  await page.getByRole("button", { name: "Create account" }).click();
  await at("/signup?error=email_taken");
  assert.match(await alert(), /already exists/, s.name);
  assert.equal(await page.getByLabel("E-mail").inputValue(), "", `${s.name}: a fresh form`);
  await page.getByLabel("E-mail").fill("new@example.com");
  await page.getByLabel("Password").fill("long enough password");
  await page.getByRole("button", { name: "Create account" }).click();
  await at("/verify?email=new%40example.com");
  assert.equal(await page.getByLabel("E-mail").inputValue(), "new@example.com", s.name);

  await page.goto(`${s.origin}/verify?email=ada%40example.com`);
  await page.getByLabel("Code").fill("000000");
  await page.getByRole("button", { name: "Verify" }).click();
  await at("/verify?email=ada%40example.com&error=invalid_code");
  assert.match(await alert(), /code is not right/, s.name);
  await page.getByLabel("Code").fill("123456");
  await page.getByRole("button", { name: "Verify" }).click();
  await at("/welcome");

  await page.goto(`${s.origin}/forgot`);
  await page.getByLabel("E-mail").fill("ada@example.com");
  await page.getByRole("button", { name: "Send reset link" }).click();
  await at("/forgot?sent=1");
  assert.match(await page.getByRole("status").textContent() ?? "", /If an account exists/);

  await page.goto(`${s.origin}/reset?token=bad`);
  await page.getByLabel("New password").fill("new long password");
  await page.getByRole("button", { name: "Save new password" }).click();
  await at("/reset?token=bad&error=invalid_token");
  assert.match(await alert(), /link is not valid/, s.name);
  await page.goto(`${s.origin}/reset?token=good`);
  await page.getByLabel("New password").fill("new long password");
  await page.getByRole("button", { name: "Save new password" }).click();
  await at("/login");
}

const URLS = [
  "/login",
  "/login?error=invalid_credentials",
  "/login?error=%3Cb%3Ehi%3C%2Fb%3E",
  "/signup",
  "/signup?error=email_taken",
  "/forgot",
  "/forgot?sent=1",
  "/reset?token=t",
  "/verify?email=ada%40example.com",
];

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name:
    "hydration (nojs): every app (React 18, React 19, Preact 10, Preact 11, React 18 on the JSR package) and React document serves the same DOM; every form posts plainly",
  ...opts,
  async fn() {
    const sites = await startSites();
    const browser = await launch();
    try {
      const ctx = await context(browser, false);
      const page = await ctx.newPage();
      for (const url of URLS) {
        const doms: string[][] = [];
        for (const s of sites) {
          await page.goto(s.origin + url);
          doms.push(await domOf(page, s));
        }
        assert.ok(doms[0].length > 20, `${url}: a page was rendered`);
        for (let i = 1; i < sites.length; i++) {
          assert.deepEqual(doms[i], doms[0], `${url}: ${sites[i].name} DOM differs from React 18`);
        }
      }
      for (const s of sites) await plainPosts(page, s);
      await shot(page, "hydration-login-nojs");
      await ctx.close();
    } finally {
      await browser.close();
      for (const s of sites) await s.close();
    }
  },
});

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name:
    "hydration (js): inline errors and onSuccess in every app (React 18, React 19, Preact 10, Preact 11, React 18 on the JSR package) and React document",
  ...opts,
  async fn() {
    const sites = await startSites();
    const browser = await launch();
    try {
      for (const s of sites) {
        const ctx = await context(browser, true);
        const page = await ctx.newPage();
        const problems: string[] = [];
        page.on("console", (m) => {
          // The browser logs every 4xx answer (the forms' errors, the favicon); anything else
          // at error or warning level (a hydration mismatch, an invalid prop) is a problem.
          if (m.text().startsWith("Failed to load resource")) return;
          if (m.type() === "error" || m.type() === "warning") problems.push(m.text());
        });
        page.on("pageerror", (e) => problems.push(e.message));
        let loads = 0;
        page.on("load", () => loads++);
        const open = async (url: string) => {
          await page.goto(s.origin + url);
          await page.locator("html[data-hydrated]").waitFor({ state: "attached" });
        };

        // Sign in: an error inline without a page load, then onSuccess in the app's state.
        await open("/login");
        assert.equal(
          await page.locator("html").getAttribute("data-hydrated"),
          s.runtime === "preact" ? "preact" : "react",
        );
        await page.getByLabel("E-mail").fill("ada@example.com");
        await page.getByLabel("Password").fill("wrong password");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByRole("alert").getByText("That e-mail and password don't match an account.")
          .waitFor();
        assert.equal(new URL(page.url()).pathname + new URL(page.url()).search, "/login");
        assert.equal(await page.getByLabel("Password").getAttribute("aria-invalid"), "true");
        await page.getByLabel("Password").fill("right password");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.locator("#done").getByText("Done: ada@example.com").waitFor();
        assert.equal(await page.getByRole("alert").textContent(), "", "error cleared");
        assert.equal(new URL(page.url()).pathname, "/login", `${s.name}: no navigation`);
        assert.equal(loads, 1, `${s.name}: one page load for the whole sign-in`);
        await shot(page, `hydration-login-js-${s.name.replace(/ /g, "").toLowerCase()}`);

        // Sign-up: error inline; then success hands the answer to onSuccess.
        await open("/signup");
        await page.getByLabel("E-mail").fill("taken@example.com");
        await page.getByLabel("Password").fill("long enough password");
        await page.getByRole("button", { name: "Create account" }).click();
        await page.getByRole("alert").getByText(/already exists/).waitFor();
        await page.getByLabel("E-mail").fill("new@example.com");
        await page.getByRole("button", { name: "Create account" }).click();
        await page.locator("#done").getByText("Done: new@example.com").waitFor();

        // Verify: wrong code inline, right code to onSuccess.
        await open("/verify?email=ada%40example.com");
        await page.getByLabel("Code").fill("000000");
        await page.getByRole("button", { name: "Verify" }).click();
        await page.getByRole("alert").getByText(/code is not right/).waitFor();
        await page.getByLabel("Code").fill("123456");
        await page.getByRole("button", { name: "Verify" }).click();
        await page.locator("#done").getByText("Done: ada@example.com").waitFor();

        // Forgot: the neutral sentence appears in place and onSuccess runs.
        await open("/forgot");
        await page.getByLabel("E-mail").fill("ada@example.com");
        await page.getByRole("button", { name: "Send reset link" }).click();
        await page.getByRole("status").getByText(/If an account exists/).waitFor();
        await page.locator("#done").getByText("Done: ada@example.com").waitFor();

        // Reset: a bad token inline, a good one to onSuccess.
        await open("/reset?token=bad");
        await page.getByLabel("New password").fill("new long password");
        await page.getByRole("button", { name: "Save new password" }).click();
        await page.getByRole("alert").getByText(/link is not valid/).waitFor();
        await open("/reset?token=good");
        await page.getByLabel("New password").fill("new long password");
        await page.getByRole("button", { name: "Save new password" }).click();
        await page.locator("#done").getByText("Done: reset").waitFor();

        assert.deepEqual(problems, [], `${s.name} reported problems`);
        await ctx.close();
      }
    } finally {
      await browser.close();
      for (const s of sites) await s.close();
    }
  },
});
