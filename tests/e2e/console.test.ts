/**
 * The operator's console in Chromium, with JavaScript on and off: an administrator signs in,
 * finds one person among 10,000, promotes and demotes them, signs them out everywhere (their
 * next request is signed out), registers a relay site and completes a relay sign-in with it,
 * creates and revokes a mail API key (the revoked key gets 401), toggles a rule, sends a
 * webhook delivery again, edits the live server config and meets a 412 conflict made by a
 * concurrent edit.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { context, HAVE_CHROMIUM, launch } from "./_harness.ts";
import { consoleShot, makeUser, startReceiver, startRelaySite, startWorld } from "./_console.ts";
import { ResponseChecker } from "../mail/_openapi.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts

async function notice(page: Page, text: RegExp): Promise<void> {
  await page.getByRole("status").filter({ hasText: text }).first().waitFor();
}

for (const js of [true, false]) {
  const mode = js ? "js" : "nojs";
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e console (${mode}): users, relay sites, mail keys, rules, webhooks, live config and 412`,
    ...opts,
    async fn(t) {
      const world = await startWorld();
      const { app, gh } = world;
      const browser = await launch();
      const receiver = startReceiver();
      const site = startRelaySite(app.origin, `e2e-${mode}`);
      try {
        const ctx = await context(browser, js);
        const page = await ctx.newPage();
        const adaId = await makeUser(app.db, `ada.${mode}@example.com`, {
          password: "ada's long passphrase",
        });

        await t.step("an administrator signs in", async () => {
          await page.goto(`${app.origin}/admin/users`);
          await page.waitForURL(/\/admin\/login\?/);
          await page.getByLabel("E-mail").fill("owner@example.com");
          await page.getByLabel("Password").fill("owner-password");
          await page.getByRole("button", { name: "Sign in" }).click();
          await page.waitForURL(`${app.origin}/admin/users`);
          await page.getByText("10002 accounts.").waitFor();
        });

        await t.step("finds one person among 10,000, promotes and demotes them", async () => {
          const search = page.getByLabel("Find an account");
          await search.fill(`ada.${mode}`);
          if (js) {
            // Results follow the typing; no button pressed.
            await page.getByText(`1 account matches “ada.${mode}”.`).waitFor();
          } else {
            await page.getByRole("button", { name: "Search" }).click();
            await page.waitForURL(/search=ada/);
          }
          await page.getByRole("link", { name: `ada.${mode}@example.com` }).click();
          await page.waitForURL(`${app.origin}/admin/users/${adaId}`);
          await page.getByRole("button", { name: "Make administrator" }).click();
          await notice(page, /They are now an administrator/);
          await consoleShot(page, `flow-user-promoted-${mode}`);
          await page.getByRole("button", { name: "Remove administration" }).click();
          await notice(page, /They are no longer an administrator/);
        });

        await t.step("signs them out everywhere: their next request is signed out", async () => {
          const hers = await context(browser, js);
          const herPage = await hers.newPage();
          await herPage.goto(`${app.origin}/users/login`);
          await herPage.getByLabel("E-mail").fill(`ada.${mode}@example.com`);
          await herPage.getByLabel("Password").fill("ada's long passphrase");
          await herPage.getByRole("button", { name: "Sign in" }).click();
          await herPage.waitForURL(`${app.origin}/users/`);
          await page.getByRole("button", { name: "Sign out everywhere" }).click();
          await notice(page, /Every session of this account has ended/);
          await herPage.reload();
          await herPage.waitForURL(/\/users\/login$/);
          await hers.close();
        });

        await t.step("registers a relay site and completes a relay sign-in with it", async () => {
          await page.getByRole("link", { name: "Relay sites" }).click();
          await page.getByLabel("Site id").fill(`e2e-${mode}`);
          await page.getByLabel("Name").fill(`E2E site (${mode})`);
          await page.getByLabel("Return URLs").fill(site.callback);
          await page.getByRole("button", { name: "Register the site" }).click();
          await notice(page, /is registered with the broker/);
          site.secret = (await page.locator("#relay-secret").textContent())!.trim();
          assert.ok(site.secret.length >= 40);
          // The development provider's consent form stands in for a provider's own site: with
          // a real one, the app's CSP (form-action 'self') is not on that page. Here it would
          // stop the redirect chain to the relay site's origin, so this visitor ignores CSP.
          const visiting = await browser.newContext({ javaScriptEnabled: js, bypassCSP: true });
          const visitor = await visiting.newPage();
          await visitor.goto(`${site.origin}/start`);
          await visitor.waitForURL(/\/dev-idp\/github\/login\/oauth\/authorize/);
          await visitor.getByLabel("E-mail", { exact: true }).fill(`relay.${mode}@example.com`);
          await visitor.getByRole("button", { name: "Continue" }).click();
          await visitor.waitForURL(/\/callback\?relay=/);
          await visitor.getByText(`Signed in at the relay site as relay.${mode}@example.com`)
            .waitFor();
          await visiting.close();
        });

        await t.step("creates and revokes a mail API key: the revoked key gets 401", async () => {
          await page.getByRole("link", { name: "Mail API" }).click();
          await page.getByLabel("Name").fill(`Acme ${mode}`);
          await page.getByRole("button", { name: "Create the account" }).click();
          await notice(page, /The account was created/);
          await page.getByLabel("Full name of a new user").fill("Ann Archer");
          await page.getByRole("button", { name: "Add the user" }).click();
          await notice(page, /The user was added/);
          await page.getByRole("link", { name: "API keys" }).click();
          await page.getByLabel("Label").fill("CRM");
          await page.getByRole("button", { name: "Create the key" }).click();
          await notice(page, /The key was created/);
          const key = (await page.locator("#api-key").textContent())!.trim();
          const items = `${app.origin}/api/account-docs/v2/items`;
          // (the mail API's answers are checked against its OpenAPI document)
          const mail = new ResponseChecker();
          const fetch = mail.fetch();
          const works = await fetch(items, { headers: { "x-api-key": key } });
          assert.equal(works.status, 200);
          await works.body?.cancel();
          await page.getByRole("button", { name: `Revoke the key ${key.slice(0, 12)}` }).click();
          await notice(page, /The key was revoked/);
          const refused = await fetch(items, { headers: { "x-api-key": key } });
          assert.equal(refused.status, 401);
          await refused.body?.cancel();
          mail.assertClean();
          assert.deepEqual([...mail.seen], ["GET /items 200", "GET /items 401"]);
        });

        await t.step("toggles a rule and sends a webhook delivery again", async () => {
          await page.getByRole("link", { name: "Webhooks" }).click();
          await page.getByLabel("URL").fill(receiver.url);
          await page.getByRole("button", { name: "Register the webhook" }).click();
          await notice(page, /The webhook was registered/);
          await page.getByRole("link", { name: "Rules" }).click();
          await page.getByRole("button", { name: "Turn on Auto Scan for every user" }).click();
          await notice(page, /Auto Scan changed for 1 user/);
          for (let i = 0; i < 100 && receiver.deliveries.length < 1; i++) {
            await new Promise((r) => setTimeout(r, 50));
          }
          assert.equal(receiver.deliveries.length, 1);
          await page.getByRole("link", { name: "Webhooks" }).click();
          await page.getByRole("link", { name: "Delivery log" }).click();
          const first = receiver.deliveries[0];
          await page.getByRole("button", { name: `Send again: delivery ${first}` }).click();
          await notice(page, /The event is on its way again as delivery/);
          for (let i = 0; i < 100 && receiver.deliveries.length < 2; i++) {
            await new Promise((r) => setTimeout(r, 50));
          }
          assert.equal(receiver.deliveries.length, 2);
          assert.notEqual(receiver.deliveries[1], first);
        });

        await t.step("edits the live server config", async () => {
          await page.getByRole("link", { name: "Web server" }).click();
          for (const key of ["apps", "http", "servers", "srv0", "routes", "0", "handle", "0"]) {
            await page.getByRole("table").getByRole("link", { name: key, exact: true }).click();
          }
          await page.waitForURL(/path=apps\/http\/servers\/srv0\/routes\/0\/handle\/0$/);
          if (js) {
            // The field says at once when it does not parse.
            await page.getByLabel("JSON of this node").fill("[1,");
            await page.getByText("This is not valid JSON yet").waitFor();
          }
          await page.getByLabel("JSON of this node").fill(JSON.stringify({
            handler: "reverse_proxy",
            upstreams: [{ dial: gh.upstream }],
            headers: { response: { set: { "X-Console": [mode] } } },
          }));
          await page.getByRole("button", { name: "Save this node" }).click();
          await notice(page, /Saved: the server runs the changed configuration/);
          const res = await fetch(`http://127.0.0.1:${gh.proxyPort}/`);
          assert.equal(res.headers.get("x-console"), mode);
          await res.body?.cancel();
        });

        await t.step("upstream health (refreshed live with JavaScript) and the CA", async () => {
          await page.goto(`${app.origin}/admin/server/status`);
          await page.getByRole("cell", { name: gh.upstream }).waitFor();
          assert.match(await page.locator("#upstreams").textContent() ?? "", /Healthy/);
          if (js) await page.getByText("Updated live at").waitFor({ timeout: 10_000 });
          await page.getByText("Local certificate authority").waitFor();
        });

        await t.step(
          "meets a 412 conflict made by a concurrent edit, which it never overwrites",
          async () => {
            const path = "apps/http/servers/srv0/routes/0/handle/0/headers/response/set";
            await page.goto(`${app.origin}/admin/server?path=${path}`);
            const theirs = await fetch(`${gh.adminUrl}/config/${path}`, {
              method: "PATCH",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ "X-Console": ["someone else"] }),
            });
            assert.equal(theirs.status, 200);
            await theirs.body?.cancel();
            await page.getByLabel("JSON of this node").fill(
              JSON.stringify({ "X-Console": ["mine"] }),
            );
            await page.getByRole("button", { name: "Save this node" }).click();
            await page.getByRole("heading", { name: "Someone changed this part of the config" })
              .waitFor();
            assert.match(await page.getByRole("alert").textContent() ?? "", /Nothing was saved/);
            assert.match(await page.locator("main").textContent() ?? "", /someone else/);
            await consoleShot(page, `flow-conflict-${mode}`);
            const now = await (await fetch(`${gh.adminUrl}/config/${path}`)).json();
            assert.deepEqual(now, { "X-Console": ["someone else"] });
          },
        );

        await t.step("the audit log lists all of it, filtered by action", async () => {
          await page.getByRole("link", { name: "Audit log" }).click();
          await page.getByLabel("Action starts with").fill("user.");
          await page.getByRole("button", { name: "Filter" }).click();
          const text = await page.locator("main").textContent() ?? "";
          for (const action of ["user.promote", "user.demote", "user.sign_out_everywhere"]) {
            assert.ok(text.includes(action), action);
          }
          assert.ok(!text.includes("relay.register"));
          await page.getByLabel("Action starts with").fill("");
          await page.getByRole("button", { name: "Filter" }).click();
          const all = await page.locator("main").textContent() ?? "";
          for (
            const action of [
              "relay.register",
              "mail.key.revoke",
              "mail.rule.set",
              "mail.webhook.redeliver",
              "server.config.patch",
              "server.config.conflict",
            ]
          ) assert.ok(all.includes(action), action);
        });
        await ctx.close();
      } finally {
        await browser.close();
        await receiver.close();
        await site.close();
        await world.close();
      }
    },
  });
}
