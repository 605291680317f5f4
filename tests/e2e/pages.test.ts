/**
 * The pages themselves in Chromium, served by a small site built from the app's page helpers:
 * hydration (inline errors without a page load, onSuccess), the same form with JavaScript
 * off, keyboard-only use with a visible focus ring, and style overrides.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  answerError,
  answerOk,
  codeParam,
  mountClientScript,
  renderPage,
} from "../../app/auth_pages.ts";
import { context, HAVE_CHROMIUM, launch, shot } from "./_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts

function site(): { origin: string; close(): Promise<void> } {
  const app = new Hono();
  mountClientScript(app);
  app.get("/login", (c) =>
    renderPage(c, "", {
      page: "login",
      props: {
        action: "/api/auth/login",
        forgotHref: "/forgot",
        signupHref: "/signup",
        error: codeParam(c, "error") ?? codeParam(c, "oauth_error"),
        styles: { button: { background: "rgb(15, 118, 110)" } },
      },
      sso: { providers: ["google"] },
    }));
  app.post("/api/auth/login", async (c) => {
    const form = await c.req.parseBody();
    if (form.password !== "right password") {
      return answerError(c, "invalid_credentials", 401, "/login");
    }
    return answerOk(c, "/welcome");
  });
  app.get("/welcome", (c) => c.html("<h1>Welcome</h1>"));
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app.fetch);
  return { origin: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name: "e2e pages (js): errors appear inline without a page load; success follows redirect",
  ...opts,
  async fn() {
    const s = site();
    const browser = await launch();
    try {
      const ctx = await context(browser, true);
      const page = await ctx.newPage();
      const loads: string[] = [];
      page.on("load", () => loads.push(page.url()));
      await page.goto(`${s.origin}/login`);
      await page.waitForFunction(() => document.querySelector("script[type=module]") !== null);
      await page.waitForLoadState("networkidle");
      await page.getByLabel("E-mail").fill("ada@example.com");
      await page.getByLabel("Password").fill("wrong password");
      await page.getByRole("button", { name: "Sign in" }).click();
      const alert = page.getByRole("alert");
      await assert.doesNotReject(
        alert.getByText("That e-mail and password don't match an account.").waitFor(),
      );
      assert.equal(new URL(page.url()).pathname, "/login");
      assert.equal(loads.length, 1, "no page load for the error");
      assert.equal(await page.getByLabel("E-mail").inputValue(), "ada@example.com", "input kept");
      assert.equal(await page.getByLabel("Password").getAttribute("aria-invalid"), "true");
      await shot(page, "pages-login-inline-error-js");
      await page.getByLabel("Password").fill("right password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${s.origin}/welcome`);
      await ctx.close();
    } finally {
      await browser.close();
      await s.close();
    }
  },
});

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name: "e2e pages (nojs): the same form posts and comes back with the error in words",
  ...opts,
  async fn() {
    const s = site();
    const browser = await launch();
    try {
      const ctx = await context(browser, false);
      const page = await ctx.newPage();
      await page.goto(`${s.origin}/login?oauth_error=%3Cb%3Ehi%3C%2Fb%3E`);
      assert.match(await page.getByRole("alert").textContent() ?? "", /Something went wrong/);
      assert.equal(await page.locator("b").count(), 0, "raw oauth_error is never rendered");
      await page.goto(`${s.origin}/login?oauth_error=invalid_state`);
      assert.match(
        await page.getByRole("alert").textContent() ?? "",
        /took too long or came from another tab/,
      );
      await page.getByLabel("E-mail").fill("ada@example.com");
      await page.getByLabel("Password").fill("wrong password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${s.origin}/login?error=invalid_credentials`);
      assert.match(await page.getByRole("alert").textContent() ?? "", /don't match an account/);
      await shot(page, "pages-login-error-nojs");
      await page.getByLabel("E-mail").fill("ada@example.com");
      await page.getByLabel("Password").fill("right password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(`${s.origin}/welcome`);
      await ctx.close();
    } finally {
      await browser.close();
      await s.close();
    }
  },
});

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name: "e2e pages: keyboard only, visible focus, style overrides applied",
  ...opts,
  async fn() {
    const s = site();
    const browser = await launch();
    try {
      const ctx = await context(browser, true);
      const page = await ctx.newPage();
      await page.goto(`${s.origin}/login`);
      await page.waitForLoadState("networkidle");
      const focused = () =>
        page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          const style = getComputedStyle(el);
          return {
            name: el.getAttribute("name") ?? el.textContent,
            outline: style.outlineStyle,
            width: style.outlineWidth,
          };
        });
      await page.keyboard.press("Tab");
      const email = await focused();
      assert.equal(email.name, "email");
      assert.notEqual(email.outline, "none");
      await page.keyboard.type("ada@example.com");
      await page.keyboard.press("Tab");
      assert.equal((await focused()).name, "password");
      await page.keyboard.type("right password");
      await page.keyboard.press("Tab");
      const button = await focused();
      assert.equal(button.name, "Sign in");
      assert.notEqual(button.outline, "none", "focus ring on the button");
      assert.notEqual(button.width, "0px");
      const background = await page.getByRole("button", { name: "Sign in" })
        .evaluate((el) => getComputedStyle(el).backgroundColor);
      assert.equal(background, "rgb(15, 118, 110)");
      await shot(page, "pages-login-keyboard-focus");
      await page.keyboard.press("Enter");
      await page.waitForURL(`${s.origin}/welcome`);
      await ctx.close();
    } finally {
      await browser.close();
      await s.close();
    }
  },
});
