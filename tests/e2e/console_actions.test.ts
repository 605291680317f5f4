/**
 * The console's actions that `console.test.ts` does not drive, in Chromium with JavaScript on
 * and off: the home's counts and latest changes; a relay site's name and return URLs changed
 * (a URL the broker could never match is refused and nothing is saved), its secret rotated and
 * the site removed after a confirmation page; a signup code resent and an account deleted after
 * its confirmation page; a pending mail request completed with its scan and another failed with
 * a reason; a key found by the prefix a customer quotes; a Gatehousefile uploaded, previewed as
 * JSON and loaded into a real Gatehouse server. Each end state is checked where it lives (the
 * tables, the mail API, the server), not only on the page.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { Page } from "playwright-core";
import { context, HAVE_CHROMIUM, launch } from "./_harness.ts";
import { checkPage, makeUser } from "./_console.ts";
import { getUserByEmail, listAudit } from "../../d1.ts";
import { MailroomClient } from "../../mail.ts";
import { lastMail, OWNER, startConsoleApp, startGatehouse } from "../app/console/_harness.ts";

const opts = { sanitizeOps: false, sanitizeResources: false }; // see relay.test.ts
const OPERATOR = "development-only-mail_operator_token-do-not-use-in-production";
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);
const PDF = new TextEncoder().encode("%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n");

async function notice(page: Page, text: RegExp): Promise<void> {
  await page.getByRole("status").filter({ hasText: text }).first().waitFor();
}

async function alert(page: Page, text: RegExp): Promise<void> {
  await page.getByRole("alert").filter({ hasText: text }).first().waitFor();
}

/** The body rows of a table (by its caption), each as its cells' texts. */
async function rowsOf(page: Page, caption: string): Promise<string[][]> {
  return await page.getByRole("region", { name: caption }).locator("tbody tr").evaluateAll(
    (rows) =>
      rows.map((r) =>
        [...(r as HTMLTableRowElement).cells].map((c) => (c.textContent ?? "").trim())
      ),
  );
}

for (const js of [true, false]) {
  const mode = js ? "js" : "nojs";
  Deno.test({
    ignore: !HAVE_CHROMIUM,
    name:
      `e2e console actions (${mode}): home, relay edit/rotate/remove, resend and delete, mail items, key by prefix, load a config`,
    ...opts,
    async fn(t) {
      const gh = await startGatehouse();
      const app = await startConsoleApp({ GATEHOUSE_ADMIN: gh.admin });
      const browser = await launch();
      const check = (page: Page, name: string) =>
        checkPage(page, `action-${name}-${mode}`, { javaScript: js });
      try {
        const ctx = await context(browser, js);
        const page = await ctx.newPage();

        await t.step("signs in and lands on the home: counts and latest changes", async () => {
          await makeUser(app.db, `helper.${mode}@example.com`, { admin: true });
          await page.goto(`${app.origin}/admin/`);
          await page.waitForURL(/\/admin\/login\?/);
          await page.getByLabel("E-mail").fill(OWNER.email);
          await page.getByLabel("Password").fill(OWNER.password);
          await page.getByRole("button", { name: "Sign in" }).click();
          await page.waitForURL(`${app.origin}/admin/`);
          await page.getByRole("heading", { name: "Console home" }).waitFor();
          const people = await page.getByRole("region", { name: "People" }).textContent();
          assert.match(people ?? "", /2 accounts, 2 of them administrators\./);
          const recent = await rowsOf(page, "The latest entries of the audit log");
          assert.equal(recent.length, 1);
          assert.deepEqual(recent[0].slice(1, 3), [OWNER.email, "console.sign_in"]);
          assert.match(recent[0][3], /^user:[0-9a-f-]{36}$/);
          for (const place of ["Users", "Relay sites", "Mail API", "Web server", "Audit log"]) {
            await page.getByRole("link", { name: `Open: ${place}` }).waitFor();
          }
        });

        const siteId = `edit-${mode}`;
        await t.step(
          "relay: changes a site's name and return URLs (a bad URL saves nothing), rotates its secret, removes it after confirming",
          async () => {
            await page.getByRole("link", { name: "Open: Relay sites" }).click();
            await page.getByLabel("Site id").fill(siteId);
            await page.getByLabel("Name", { exact: true }).fill("Before");
            await page.getByLabel("Return URLs", { exact: true }).fill("https://before.example/cb");
            await page.getByRole("button", { name: "Register the site" }).click();
            await notice(page, /is registered with the broker/);
            const first = (await page.locator("#relay-secret").textContent())!.trim();
            await page.getByRole("link", { name: "Go to the site" }).click();
            await page.waitForURL(`${app.origin}/admin/relay/${siteId}`);

            const stored = async () => {
              const rows = await app.db.prepare(
                `SELECT s.name, s.secret, group_concat(u.url, ' ') AS urls FROM relay_sites s
                 LEFT JOIN relay_return_urls u ON u.site_id = s.id WHERE s.id = ? GROUP BY s.id`,
              ).bind(siteId).first<{ name: string; secret: string; urls: string }>();
              return rows;
            };
            // A return URL with a query could never match: refused, nothing saved.
            await page.getByLabel("Name", { exact: true }).fill("After");
            await page.getByLabel("Return URLs", { exact: true }).fill(
              "https://after.example/cb\nhttps://after.example/cb?x=1",
            );
            await page.getByRole("button", { name: "Save" }).click();
            await alert(page, /a return URL has no query/);
            assert.deepEqual(await stored(), {
              name: "Before",
              secret: first,
              urls: "https://before.example/cb",
            });
            await page.getByLabel("Return URLs", { exact: true }).fill(
              "https://after.example/cb\n/relay-demo/api/auth/relay/callback",
            );
            await page.getByRole("button", { name: "Save" }).click();
            await notice(page, /Saved: the broker uses the new return URLs now/);
            const saved = await stored();
            assert.equal(saved?.name, "After");
            assert.deepEqual(
              saved?.urls.split(" ").sort(),
              ["/relay-demo/api/auth/relay/callback", "https://after.example/cb"],
            );

            await page.getByRole("button", { name: "Rotate the secret" }).click();
            await notice(page, /signs this site's tokens with the new secret from now on/);
            const second = (await page.locator("#relay-secret").textContent())!.trim();
            assert.notEqual(second, first);
            assert.equal((await stored())?.secret, second, "the broker has the new secret");
            // The copy button is an enhancement: there with JavaScript, hidden without.
            const copy = page.getByRole("button", { name: "Copy to clipboard" });
            if (js) await copy.waitFor();
            else assert.equal(await copy.count(), 0);

            await page.getByRole("link", { name: "Go to the site" }).click();
            await page.getByRole("link", { name: "Remove this site…" }).click();
            await page.getByRole("heading", { name: `Remove ${siteId}?` }).waitFor();
            await check(page, "relay-remove-confirm");
            await page.getByRole("link", { name: "Keep it" }).click();
            await page.waitForURL(`${app.origin}/admin/relay/${siteId}`);
            assert.ok(await stored(), "kept");
            await page.getByRole("link", { name: "Remove this site…" }).click();
            await page.getByRole("button", { name: "Remove the site" }).click();
            await notice(page, /The site was removed/);
            assert.equal(await stored(), null);
            assert.equal(await page.getByRole("link", { name: siteId }).count(), 0);
          },
        );

        await t.step(
          "users: resends a signup code, deletes an account after its confirmation page",
          async () => {
            const pending = `pending.${mode}@example.com`;
            const signup = await fetch(`${app.origin}/users/api/auth/signup`, {
              method: "POST",
              headers: { accept: "application/json" },
              body: new URLSearchParams({ email: pending, password: "a pending passphrase" }),
            });
            assert.equal(signup.status, 200);
            await signup.body?.cancel();
            // The first code went a minute ago, so the resend throttle lets a new one go.
            await app.db.prepare("UPDATE otp_codes SET sent_at = sent_at - 61000 WHERE email = ?")
              .bind(pending).run();
            const sent = async () =>
              (await app.db.prepare("SELECT count(*) AS n FROM dev_outbox WHERE to_addr = ?")
                .bind(pending).first<{ n: number }>())!.n;
            assert.equal(await sent(), 1);
            await page.getByRole("link", { name: "Users", exact: true }).click();
            await page.getByLabel("Find an account").fill(pending);
            if (!js) await page.getByRole("button", { name: "Search" }).click();
            await page.getByRole("link", { name: pending }).click();
            await page.getByText("Not verified").waitFor();
            await page.getByRole("button", { name: "Resend the signup code" }).click();
            await notice(page, /A new signup code is on its way to them/);
            assert.equal(await sent(), 2);
            assert.match((await lastMail(app.db, pending))!.text, /\b\d{6}\b/);

            const leaving = `leaving.${mode}@example.com`;
            const leavingId = await makeUser(app.db, leaving);
            await page.goto(`${app.origin}/admin/users/${leavingId}`);
            await page.getByRole("link", { name: "Delete this account…" }).click();
            await page.getByRole("heading", { name: `Delete ${leaving}?` }).waitFor();
            await page.getByRole("link", { name: "Keep it" }).click();
            await page.waitForURL(`${app.origin}/admin/users/${leavingId}`);
            assert.ok((await getUserByEmail(app.db, leaving)).ok, "kept");
            await page.getByRole("link", { name: "Delete this account…" }).click();
            await page.getByRole("button", { name: "Delete this account" }).click();
            await page.getByRole("heading", { name: "Account deleted" }).waitFor();
            await notice(page, new RegExp(`The account of ${leaving} was deleted`));
            await page.getByText("They were sent an e-mail saying so.").waitFor();
            await check(page, "user-deleted");
            assert.deepEqual(await getUserByEmail(app.db, leaving), {
              ok: false,
              error: "not_found",
            });
            assert.match((await lastMail(app.db, leaving))!.subject, /deleted/i);
            await page.getByRole("link", { name: "Back to the users" }).click();
            await page.waitForURL(`${app.origin}/admin/users`);
          },
        );

        const ops = new MailroomClient({
          baseUrl: `${app.origin}/api/account-docs/v2`,
          operatorToken: OPERATOR,
        });
        const { account_id } = await ops.createAccount({ name: `Items ${mode}` });
        await t.step(
          "mail items: completes a pending open request with its scan, fails another with a reason",
          async () => {
            const { user_id } = await ops.createUser(account_id, "Ann Archer");
            const { address_id } = await ops.createAddress(account_id, user_id, "Front desk");
            // Auto Scan on: each arrival gets an open request at once.
            await ops.setAccountRule(account_id, "auto_scan", true);
            const letter = async (sender: string) =>
              (await ops.receiveItem({
                address_id,
                sender_name: sender,
                envelope: new Blob([PNG], { type: "image/png" }),
              })).mail_id;
            const bank = await letter("Bank");
            const tax = await letter("Tax Office");
            assert.equal((await ops.getItem(bank)).current_status, "open_requested");
            assert.equal((await ops.getItem(tax)).current_status, "open_requested");

            await page.goto(`${app.origin}/admin/mail/items?account=${account_id}`);
            await page.locator(`#scan-${bank}-scan`).setInputFiles({
              name: "bank.pdf",
              mimeType: "application/pdf",
              buffer: Buffer.from(PDF),
            });
            await page.getByRole("button", { name: `Complete the request on item ${bank}` })
              .click();
            await notice(page, /The request was completed/);
            assert.equal((await ops.getItem(bank)).current_status, "opened");

            await page.locator(`#reason-${tax}-reason`).fill("Sealed with wax");
            await page.getByRole("button", { name: `Fail the request on item ${tax}` }).click();
            await notice(page, /The request was failed: the item is back in the state before/);
            const failed = await ops.getItem(tax);
            assert.equal(failed.current_status, "received");
            assert.ok(
              failed.status_history.some((s) => s.note?.includes("Sealed with wax")),
              JSON.stringify(failed.status_history),
            );
            await check(page, "mail-items-done");
          },
        );

        await t.step("mail keys: finds a key by the prefix a customer quotes", async () => {
          const { api_key } = await ops.createApiKey(account_id, `Quoted ${mode}`);
          await ops.createApiKey(account_id, "Another");
          await page.goto(`${app.origin}/admin/mail/keys?account=${account_id}`);
          const prefix = api_key.slice(0, 12);
          await page.getByLabel("Find a key by its first characters").fill(prefix);
          await page.getByRole("button", { name: "Find", exact: true }).click();
          await page.waitForURL(/\/admin\/mail\/keys\?prefix=/);
          await page.getByRole("heading", { name: "Find an API key" }).waitFor();
          const table = page.getByRole("region", { name: `Keys starting with ${prefix}` });
          const text = await table.textContent() ?? "";
          assert.match(text, new RegExp(`Quoted ${mode}`));
          assert.doesNotMatch(text, /Another/);
          assert.ok(!text.includes(api_key), "never the whole key");
          await check(page, "mail-key-found");
          await table.getByRole("link", { name: "Its account" }).click();
          await page.waitForURL(`${app.origin}/admin/mail/keys?account=${account_id}`);
          await page.getByRole("heading", { name: `API keys of Items ${mode}` }).waitFor();
        });

        await t.step(
          "web server: a Gatehousefile that does not parse loads nothing; an uploaded one is previewed as JSON, then loaded",
          async () => {
            await page.goto(`${app.origin}/admin/server/load`);
            await page.getByLabel("Format").selectOption("gatehousefile");
            await page.getByLabel("The config", { exact: true }).fill("{\n");
            await page.getByRole("button", { name: "Preview the JSON" }).click();
            await alert(page, /The server could not read this config, so nothing was loaded/);
            const answer = async () => {
              const r = await fetch(`http://127.0.0.1:${gh.proxyPort}/`);
              return await r.text();
            };
            assert.equal(await answer(), "hello from upstream");

            const file = `{\n\tadmin 127.0.0.1:${gh.admin.split(":")[1]}\n}\n` +
              `http://127.0.0.1:${gh.proxyPort} {\n\tbind 127.0.0.1\n\trespond "loaded by the console (${mode})"\n}\n`;
            await page.getByLabel("The config", { exact: true }).fill("");
            await page.getByLabel("Or a file").setInputFiles({
              name: "Gatehousefile",
              mimeType: "text/plain",
              buffer: Buffer.from(file),
            });
            await page.getByRole("button", { name: "Preview the JSON" }).click();
            await page.getByRole("heading", { name: "Preview of the config" }).waitFor();
            const json = JSON.parse(await page.locator("pre.json").textContent() ?? "");
            assert.match(JSON.stringify(json), /static_response/);
            assert.equal(await answer(), "hello from upstream", "a preview loads nothing");
            await check(page, "server-load-preview");
            await page.getByRole("button", { name: "Load this configuration" }).click();
            await notice(page, /The server runs the new configuration/);
            assert.equal(await answer(), `loaded by the console (${mode})`);
            const live = await (await fetch(`${gh.adminUrl}/config/`)).json();
            assert.deepEqual(live, json, "the server runs exactly the previewed JSON");
          },
        );

        await t.step("the home lists the latest changes, newest first", async () => {
          await page.goto(`${app.origin}/admin/`);
          const recent = await rowsOf(page, "The latest entries of the audit log");
          const audit = await listAudit(app.db, { limit: 50 });
          assert.ok(audit.ok);
          assert.equal(audit.entries[0].action, "server.load");
          // The home shows the 8 newest, newest first.
          assert.deepEqual(
            recent.map((r) => r.slice(1)),
            audit.entries.slice(0, 8).map((e) => [e.actorEmail, e.action, e.target]),
          );
          for (
            const action of [
              "relay.update",
              "relay.rotate_secret",
              "relay.remove",
              "user.resend_verification",
              "user.delete",
              "mail.item.complete",
              "mail.item.fail",
              "server.load",
            ]
          ) assert.ok(audit.entries.some((e) => e.action === action), action);
          await check(page, "home-after");
        });
        await ctx.close();
      } finally {
        await browser.close();
        await app.close();
        await gh.close();
      }
    },
  });
}
