/**
 * Every console screen in Chromium, from the route table, with JavaScript on and then off: at
 * desktop (1280 px) and phone (390 px) width axe-core finds no serious or critical violation,
 * the page is screenshotted (under `tests/e2e/screenshots/console/`, checked non-blank) and,
 * on the phone, nothing is wider than the screen; the keyboard reaches the skip link first and
 * it leads to the content. The sign-in page and the refused sign-in are checked the same way.
 */
import assert from "node:assert/strict";
import { consoleRoutes } from "../../app/console/screens.ts";
import { HAVE_CHROMIUM, launch } from "./_harness.ts";
import {
  axeCheck,
  checkPage,
  consoleShot,
  makeUser,
  PHONE,
  startReceiver,
  startWorld,
} from "./_console.ts";
import { MailroomClient } from "../../mail.ts";
import { ResponseChecker } from "../mail/_openapi.ts";
import { Browser, OWNER, post, signIn } from "../app/console/_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const OPERATOR = "development-only-mail_operator_token-do-not-use-in-production";
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

Deno.test({
  ignore: !HAVE_CHROMIUM,
  name:
    "e2e console screens (js and nojs): axe at desktop and phone width finds nothing serious, screenshots, no overflow on a phone",
  ...opts,
  async fn(t) {
    const world = await startWorld();
    const { app } = world;
    const receiver = startReceiver();
    const browser = await launch();
    try {
      // Something on every screen: a user, a relay site, a mail account with a key, a
      // webhook with a delivery, and items with a pending request.
      const userId = await makeUser(app.db, "grace@example.com");
      // (the mail API's answers are checked against its OpenAPI document)
      const mail = new ResponseChecker();
      const ops = new MailroomClient({
        baseUrl: `${app.origin}/api/account-docs/v2`,
        operatorToken: OPERATOR,
        fetch: mail.fetch(),
      });
      const { account_id } = await ops.createAccount({ name: "Acme Corp" });
      const { user_id } = await ops.createUser(account_id, "Ann Archer");
      const { address_id } = await ops.createAddress(account_id, user_id, "Front desk");
      await ops.createApiKey(account_id, "CRM");
      const hook = await ops.registerWebhook(account_id, receiver.url);
      await ops.receiveItem({
        address_id,
        sender_name: "Bank",
        envelope: new Blob([PNG], { type: "image/png" }),
      });
      await ops.setAccountRule(account_id, "auto_scan", true);
      await ops.receiveItem({
        address_id,
        sender_name: "Tax Office",
        envelope: new Blob([PNG], { type: "image/png" }),
      });
      mail.assertClean();
      assert.equal(mail.seen.size, 7, [...mail.seen].join(", "));
      const b = await signIn(app.origin, OWNER.email, OWNER.password);
      const relay = await b.get("/admin/relay");
      await post(b, "/admin/relay", relay.body, {
        id: "billing",
        name: "Billing",
        return_urls: "https://billing.example/cb",
      });

      const ids: Record<string, string> = {
        "/users/:id": userId,
        "/relay/:id": "billing",
        "/mail/accounts/:id": account_id,
        "/mail/webhooks/:id": hook.webhook_id,
      };
      const urls = new Map<string, string>();
      for (const r of consoleRoutes()) {
        if (r.method !== "GET") continue;
        let path = r.path;
        for (const [pattern, id] of Object.entries(ids)) {
          path = path.replace(pattern, pattern.replace(":id", id));
        }
        path = path.replace("/users/:id/delete", `/users/${userId}/delete`).replace(
          "/relay/:id/remove",
          "/relay/billing/remove",
        );
        assert.ok(!path.includes(":"), `a value for ${r.path}`);
        const account = path.startsWith("/mail/") && !path.startsWith("/mail/accounts")
          ? `?account=${account_id}`
          : "";
        urls.set(r.path, `/admin${path}${account}`);
      }
      urls.set("/mail/keys?prefix", "/admin/mail/keys?prefix=gh_live_");
      urls.set("/server?path", "/admin/server?path=apps/http/servers/srv0");
      urls.set("/audit?action", "/admin/audit?action=relay.");

      await t.step(
        "the JavaScript-off check sees the page a browser without scripts shows",
        async () => {
          // A page whose script would add an unnamed button (a critical violation) and, on the
          // other URL, one that has such a button in its HTML: checked with JavaScript off, the
          // first passes (the script never runs) and the second fails.
          const ctx = await browser.newContext({ javaScriptEnabled: false });
          const page = await ctx.newPage();
          const doc = (body: string) =>
            `<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>t</h1>${body}</main></body></html>`;
          await ctx.route(`${app.origin}/probe/*`, (r) =>
            r.fulfill({
              contentType: "text/html",
              body: r.request().url().endsWith("/scripted")
                ? doc(
                  `<script>document.querySelector("main").append(document.createElement("button"))</script>`,
                )
                : doc("<button></button>"),
            }));
          await page.goto(`${app.origin}/probe/scripted`);
          await axeCheck(page, "scripted", { javaScript: false });
          await page.goto(`${app.origin}/probe/static`);
          await assert.rejects(
            () => axeCheck(page, "static", { javaScript: false }),
            /button-name/,
          );
          await ctx.close();
        },
      );

      for (const js of [true, false]) {
        const mode = js ? "js" : "nojs";
        const o = { javaScript: js };
        const ctx = await browser.newContext({
          javaScriptEnabled: js,
          viewport: { width: 1280, height: 900 },
        });
        const page = await ctx.newPage();
        await t.step(`(${mode}) the sign-in page`, async () => {
          await page.goto(`${app.origin}/admin/login`);
          await checkPage(page, `login-${mode}`, o);
          await page.getByLabel("E-mail").fill(OWNER.email);
          await page.getByLabel("Password").fill(OWNER.password);
          await page.getByRole("button", { name: "Sign in" }).click();
          await page.waitForURL(`${app.origin}/admin/`);
        });

        const phone = await browser.newContext({
          javaScriptEnabled: js,
          viewport: PHONE,
          isMobile: true,
          hasTouch: true,
        });
        await phone.addCookies((await ctx.cookies()).map((c) => ({ ...c })));
        const small = await phone.newPage();

        let checked = 0;
        for (const [route, url] of urls) {
          await t.step(`(${mode}) ${route}`, async () => {
            const name = (route.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "") || "home") +
              `-${mode}`;
            const res = await page.goto(`${app.origin}${url}`);
            assert.ok(res && res.status() < 400, `${url}: ${res?.status()}`);
            await axeCheck(page, `${url} (desktop, ${mode})`, o);
            if (!url.endsWith("/upstreams")) { // the live-refresh fragment is not a page
              // The first Tab reaches the skip link, which leads to the content.
              await page.keyboard.press("Tab");
              assert.equal(
                await page.evaluate(() => document.activeElement?.textContent),
                "Skip to content",
              );
              await page.keyboard.press("Enter");
              assert.equal(await page.evaluate(() => location.hash), "#main");
            }
            await consoleShot(page, `${name}-desktop`);
            const res2 = await small.goto(`${app.origin}${url}`);
            assert.ok(res2 && res2.status() < 400, `${url} on a phone: ${res2?.status()}`);
            await axeCheck(small, `${url} (phone, ${mode})`, o);
            await consoleShot(small, `${name}-phone`);
            const wide = await small.evaluate(() => document.documentElement.scrollWidth);
            assert.ok(wide <= PHONE.width, `${url} is ${wide} px wide on a 390 px phone`);
            checked++;
          });
        }
        assert.ok(checked >= 20, `${checked} screens`);

        // Refusals are pages too: a person who may not use the console, and a visitor.
        await t.step(`(${mode}) refusal pages`, async () => {
          if (js) await makeUser(app.db, "plain@example.com");
          const other = await browser.newContext({ javaScriptEnabled: js });
          const p = await other.newPage();
          await p.goto(`${app.origin}/admin/login`);
          await p.getByLabel("E-mail").fill("plain@example.com");
          await p.getByLabel("Password").fill("correct horse battery staple");
          await p.getByRole("button", { name: "Sign in" }).click();
          // With JavaScript the sign-in form says so; without, the refusal is a page.
          await (js
            ? p.getByRole("alert").filter({ hasText: "This account may not use the console." })
            : p.getByRole("heading", { name: "This account may not use the console" })).waitFor();
          await checkPage(p, `refused-sign-in-${mode}`, o);
          const stranger = new Browser(app.origin);
          const r = await stranger.get("/admin/mail");
          assert.equal(r.status, 302);
          await other.close();
        });
        await ctx.close();
        await phone.close();
      }
    } finally {
      await browser.close();
      await receiver.close();
      await world.close();
    }
  },
});
