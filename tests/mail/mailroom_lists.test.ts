/**
 * The mailroom lists what it created (accounts, their users, addresses, keys by prefix and
 * webhooks, never a key or a secret), and error answers name the next step.
 */
import assert from "node:assert/strict";
import { type MailApiError, MailClient } from "../../mail.ts";
import { OPERATOR_TOKEN, startMail } from "./_harness.ts";

Deno.test("mailroom: lists accounts, an account's users, addresses, keys and webhooks, keys by prefix", async () => {
  const h = await startMail();
  try {
    const a = await h.account({ users: 2 });
    const b = await h.account({ sandbox: true });
    const hook = await h.ops.registerWebhook(a.accountId, "http://127.0.0.1:9/", ["rule.changed"]);
    await h.ops.revokeApiKey(a.keyId);

    const page = await h.ops.listAccounts();
    assert.deepEqual(page.data.map((x) => x.account_id), [b.accountId, a.accountId]);
    assert.equal(page.total, 2);
    assert.deepEqual(
      (await h.ops.listAccounts({ sort_order: "asc" })).data.map((x) => x.account_id),
      [a.accountId, b.accountId],
    );
    assert.equal(page.data[0].sandbox, true);

    const detail = await h.ops.getAccount(a.accountId);
    assert.equal(detail.users.length, 2);
    assert.deepEqual(detail.addresses.map((x) => x.address_id), a.addressIds);
    assert.equal(detail.api_keys.length, 1);
    assert.equal(detail.api_keys[0].prefix, a.apiKey.slice(0, 12));
    assert.notEqual(detail.api_keys[0].revoked_at, null);
    assert.deepEqual(detail.webhooks.map((w) => [w.webhook_id, w.events]), [
      [hook.webhook_id, ["rule.changed"]],
    ]);
    const raw = JSON.stringify(detail);
    assert.ok(!raw.includes(a.apiKey) && !raw.includes(hook.secret), "no key, no secret");

    const found = await h.ops.findApiKeys(b.apiKey.slice(0, 12));
    assert.deepEqual(found.map((k) => [k.key_id, k.account_id]), [[b.keyId, b.accountId]]);
    assert.deepEqual(await h.ops.findApiKeys("gh_live_zzzz"), []);
    // "gh_test_" is 8 characters: every sandbox key, and only those ("_" is no wildcard)
    assert.deepEqual((await h.ops.findApiKeys("gh_test_")).map((k) => k.key_id), [b.keyId]);
    await assert.rejects(h.ops.findApiKeys("gh"), (e: MailApiError) => e.code === 19);
  } finally {
    await h.close();
  }
});

Deno.test("errors name the next step", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const s = await h.account({ sandbox: true });
    const other = await h.account();
    const expectMessage = async (p: Promise<unknown>, code: number, re: RegExp) => {
      await assert.rejects(p, (e: MailApiError) => {
        assert.equal(e.code, code);
        assert.match(e.message, re);
        return true;
      });
    };
    // the case: an account without an address, a sandbox call that needs one
    const { account_id } = await h.ops.createAccount({ name: "Bare", sandbox: true });
    const { api_key } = await h.ops.createApiKey(account_id);
    const bare = new MailClient({ baseUrl: h.base, apiKey: api_key, retries: 0 });
    await expectMessage(
      bare.createTestItem(),
      89,
      new RegExp(
        `no address yet\\. Create one with POST /mailroom/accounts/${account_id}/addresses`,
      ),
    );
    await expectMessage(
      h.ops.createAddress(account_id, "999"),
      9410,
      new RegExp(`add one with POST /mailroom/accounts/${account_id}/users`),
    );
    await expectMessage(
      h.ops.createUser("424242", "X"),
      9410,
      /list accounts with GET \/mailroom\/accounts/,
    );
    await expectMessage(a.client.createTestItem(), 433, /sandbox key \(gh_test_\.\.\.\)/);
    await expectMessage(a.client.open("999", "1"), 89, /address_id of your items \(GET \/items\)/);
    await expectMessage(
      a.client.open(other.addressIds[0], "1"),
      9400,
      /Use an address_id of your own/,
    );
    await expectMessage(a.client.open(a.addressIds[0], "424242"), 14, /GET \/items lists/);
    const id = await h.receive(a.addressIds[0]);
    await expectMessage(
      a.client.rescan(a.addressIds[0], id),
      471,
      /item \d+ is received; rescan needs an item that is opened/,
    );
    await expectMessage(
      s.client.completeTestRequest((await s.client.createTestItem()).mail_id),
      471,
      /GET \/mailroom\/requests lists/,
    );
    const a2 = await h.account({ users: 2 });
    const at2 = await h.receive(a2.addressIds[1]);
    await expectMessage(
      a2.client.open(a2.addressIds[0], at2),
      469,
      new RegExp(`is at address ${a2.addressIds[1]}; send it to /addresses/${a2.addressIds[1]}/`),
    );
    const noKey = await fetch(`${h.base}/items`);
    assert.match((await noKey.json()).message, /send your key in the x-api-key header/);
    const wrongMethod = await fetch(`${h.base}/items`, { method: "POST" });
    assert.match((await wrongMethod.json()).message, /\/items takes GET/);
    const nowhere = await fetch(`${h.base}/itemz`);
    assert.match((await nowhere.json()).message, /reference at \/api\/account-docs\/v2\/docs/);
    const expired = await fetch(`${h.base}/files/scans/a.pdf?expires=1&signature=x`);
    assert.match((await expired.json()).message, /GET \/items again/);
    const badToken = await fetch(`${h.base}/mailroom/accounts`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}x` },
    });
    assert.match((await badToken.json()).message, /MAIL_OPERATOR_TOKEN/);
    await h.ops.revokeApiKey(a.keyId);
    await expectMessage(a.client.listItems(), 431, /creates a new one with POST/);
  } finally {
    await h.close();
  }
});
