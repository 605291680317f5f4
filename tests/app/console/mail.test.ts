/**
 * The mail screens over HTTP, against the app's own mail API: an account with a user and an
 * address, a key shown once that works until it is revoked (then 401), a rule toggled for the
 * account, a webhook whose delivery is sent again, and the mailroom completing and failing
 * requests on items; every change in the audit log, never a key or a secret.
 */
import assert from "node:assert/strict";
import { changesInWords } from "../../../app/console/mail_items.ts";
import { MailClient, MailroomClient } from "../../../mail.ts";
import { listAudit } from "../../../d1.ts";
import { OWNER, post, signIn, startConsoleApp, textOf } from "./_harness.ts";
import { ResponseChecker } from "../../mail/_openapi.ts";

const OPERATOR = "development-only-mail_operator_token-do-not-use-in-production";
const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

Deno.test("console mail: accounts, a key shown once then revoked (401), a rule, a webhook sent again, items", async () => {
  const app = await startConsoleApp();
  const received: { delivery: string; type: string }[] = [];
  const hook = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = JSON.parse(await req.text());
    received.push({ delivery: req.headers.get("x-gatehouse-delivery")!, type: body.type });
    return new Response(null, { status: 204 });
  });
  const api = `${app.origin}/api/account-docs/v2`;
  // the test's own calls to the mail API are checked against its OpenAPI document
  const mail = new ResponseChecker();
  const checked = mail.fetch();
  try {
    const b = await signIn(app.origin, OWNER.email, OWNER.password);
    const accounts = await b.get("/admin/mail");
    const made = await post(b, "/admin/mail", accounts.body, {
      name: "Acme Corp",
      api_access: "1",
    });
    assert.equal(made.status, 303);
    const account = made.location!.match(/accounts\/(\d+)/)![1];
    let page = await b.get(made.location!);
    assert.match(textOf(page.body), /The account was created\./);
    const user = await post(b, `/admin/mail/accounts/${account}/users`, page.body, {
      full_name: "Ann Archer",
    });
    page = await b.get(user.location!);
    const userId = page.body.match(/<option value="(\d+)"/)![1];
    const address = await post(b, `/admin/mail/accounts/${account}/addresses`, page.body, {
      user_id: userId,
      label: "Front desk",
    });
    page = await b.get(address.location!);
    assert.match(textOf(page.body), /Front desk \(\d+\) Ann Archer/);
    const addressId = textOf(page.body).match(/Front desk \((\d+)\)/)![1];

    // A key: shown once, works, then revoked and refused with 401.
    const keys = await b.get(`/admin/mail/keys?account=${account}`);
    const created = await post(b, "/admin/mail/keys", keys.body, { account, label: "CRM" });
    const key = created.body.match(/<p class="secret" id="api-key"[^>]*>([^<]+)<\/p>/)![1];
    assert.match(key, /^gh_live_/);
    const customer = new MailClient({ baseUrl: api, apiKey: key, fetch: checked });
    assert.equal((await customer.listItems()).total, 0);
    const later = await b.get(`/admin/mail/keys?account=${account}`);
    assert.ok(!later.body.includes(key), "the key is never shown again");
    const keyId = later.body.match(/\/admin\/mail\/keys\/(\d+)\/revoke/)![1];
    const revoked = await post(b, `/admin/mail/keys/${keyId}/revoke`, later.body, { account });
    assert.match(textOf((await b.get(revoked.location!)).body), /The key was revoked/);
    const refused = await checked(`${api}/items`, { headers: { "x-api-key": key } });
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    const found = await b.get(`/admin/mail/keys?prefix=${key.slice(0, 12)}`);
    assert.match(textOf(found.body), /Revoked/);

    // A webhook for rule changes, then a rule toggled for every user of the account.
    const hooks = await b.get(`/admin/mail/webhooks?account=${account}`);
    const registered = await post(b, "/admin/mail/webhooks", hooks.body, {
      account,
      url: `http://127.0.0.1:${hook.addr.port}/hook`,
      "event_rule.changed": "1",
    });
    assert.match(textOf(registered.body), /The webhook's signing secret/);
    const secret = registered.body.match(/id="webhook-secret"[^>]*>([^<]+)</)![1];
    const rules = await b.get(`/admin/mail/rules?account=${account}`);
    const on = await post(b, "/admin/mail/rules", rules.body, {
      account,
      automation_name: "auto_scan",
      is_active: "1",
    });
    const shown = await b.get(on.location!);
    assert.match(textOf(shown.body), /Auto Scan changed for 1 user\./);
    const ops = new MailroomClient({ baseUrl: api, operatorToken: OPERATOR, fetch: checked });
    assert.equal((await ops.listAccountRules(account)).data[0].auto_scan, true);
    for (let i = 0; i < 100 && received.length < 1; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(received.map((r) => r.type), ["rule.changed"]);

    const webhookId = (await b.get(`/admin/mail/webhooks?account=${account}`)).body
      .match(/\/admin\/mail\/webhooks\/(\d+)\?account=/)![1];
    const log = await b.get(`/admin/mail/webhooks/${webhookId}?account=${account}`);
    assert.match(textOf(log.body), /rule\.changed delivered/);
    const first = received[0].delivery;
    const again = await post(b, `/admin/mail/webhooks/${webhookId}/redeliver`, log.body, {
      account,
      delivery: first,
    });
    const afterLog = await b.get(again.location!);
    assert.match(textOf(afterLog.body), /The event is on its way again as delivery \d+/);
    for (let i = 0; i < 100 && received.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(received.length, 2);
    assert.notEqual(received[1].delivery, first);

    // Items: a shred request completed, an open request failed (back to received).
    const key2 = await ops.createApiKey(account, "items");
    const c2 = new MailClient({ baseUrl: api, apiKey: key2.api_key, fetch: checked });
    await ops.updateAccount(account, { api_access: true });
    const { mail_id: a } = await ops.receiveItem({
      address_id: addressId,
      sender_name: "Bank",
      envelope: new Blob([PNG], { type: "image/png" }),
    });
    const { mail_id: z } = await ops.receiveItem({
      address_id: addressId,
      sender_name: "Tax Office",
      envelope: new Blob([PNG], { type: "image/png" }),
    });
    // Auto Scan is on: arrivals get an open request at once; the customer asks to shred one.
    await c2.cancelOpen(addressId, a);
    await c2.shred(addressId, a, { delete_digital_copy: true });
    const items = await b.get(`/admin/mail/items?account=${account}`);
    assert.match(textOf(items.body), /Shred requested/);
    // each item's history counts its changes in words: one change, 2 changes
    const counts = [...textOf(items.body).matchAll(/(\d+) (changes?)\b/g)];
    assert.ok(counts.length > 0, textOf(items.body));
    for (const [, n, word] of counts) assert.equal(word, n === "1" ? "change" : "changes");
    assert.deepEqual([0, 1, 2].map(changesInWords), ["0 changes", "1 change", "2 changes"]);
    assert.match(textOf(items.body), /Open requested/);
    const doneShred = await b.send(`/admin/mail/items/${a}/complete`, {
      method: "POST",
      headers: { accept: "text/html", "sec-fetch-site": "same-origin" },
      body: (() => {
        const f = new FormData();
        f.set("_csrf", items.body.match(/name="_csrf" value="([^"]+)"/)![1]);
        f.set("account", account);
        return f;
      })(),
    });
    assert.equal(doneShred.status, 303);
    assert.match(textOf((await b.get(doneShred.location!)).body), /The request was completed/);
    assert.equal((await ops.getItem(a)).current_status, "shredded");
    const failed = await post(b, `/admin/mail/items/${z}/fail`, items.body, {
      account,
      reason: "Sealed with wax",
    });
    assert.match(textOf((await b.get(failed.location!)).body), /The request was failed/);
    assert.equal((await ops.getItem(z)).current_status, "received");

    const audit = await listAudit(app.db, { action: "mail." });
    assert.ok(audit.ok);
    assert.deepEqual(audit.entries.map((e) => e.action).reverse(), [
      "mail.account.create",
      "mail.user.create",
      "mail.address.create",
      "mail.key.create",
      "mail.key.revoke",
      "mail.webhook.register",
      "mail.rule.set",
      "mail.webhook.redeliver",
      "mail.item.complete",
      "mail.item.fail",
    ]);
    const logged = JSON.stringify(audit.entries);
    assert.ok(!logged.includes(key) && !logged.includes(secret), "no key or secret in the log");
    mail.assertClean();
    assert.ok(mail.seen.size >= 9, [...mail.seen].join(", "));
  } finally {
    await hook.shutdown();
    await app.close();
  }
});
