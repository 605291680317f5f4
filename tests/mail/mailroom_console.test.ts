/**
 * The mailroom endpoints an operator's console uses: an account's items and rules, a rule
 * toggled for a whole account, and a past webhook delivery sent again.
 */
import assert from "node:assert/strict";
import { MailApiError, verifyWebhook } from "../../mail.ts";
import { startMail } from "./_harness.ts";

async function refused(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  const err = await p.then(() => null, (e) => e);
  assert.ok(err instanceof MailApiError, String(err));
  assert.deepEqual([err.status, err.code], [404, 9410]);
  assert.match(err.message, pattern);
}

Deno.test("mailroom: an account's items and rules; a rule toggled for every user raises one event", async () => {
  const h = await startMail();
  try {
    const a = await h.account({ users: 2 });
    const other = await h.account();
    const mailId = await h.receive(a.addressIds[0], "Tax Office");
    await h.receive(other.addressIds[0], "Elsewhere");
    const items = await h.ops.listAccountItems(a.accountId);
    assert.deepEqual(items.data.map((i) => [i.mail_id, i.sender_name]), [[mailId, "Tax Office"]]);
    assert.equal(items.total, 1);
    const before = await h.ops.listAccountRules(a.accountId);
    assert.equal(before.total, 2);
    assert.ok(before.data.every((r) => !r.auto_shred));

    const on = await h.ops.setAccountRule(a.accountId, "auto_shred", true);
    assert.equal(on.users_changed, 2);
    const repeat = await h.ops.setAccountRule(a.accountId, "auto_shred", true);
    assert.equal(repeat.users_changed, 0);
    // The customer's own API sees it; the other account does not change.
    const mine = await a.client.listSystemRules();
    assert.ok(mine.data.every((r) => r.auto_shred));
    const theirs = await other.client.listSystemRules();
    assert.ok(theirs.data.every((r) => !r.auto_shred));

    await refused(h.ops.listAccountItems("999999"), /account/i);
    await refused(h.ops.listAccountRules("999999"), /account/i);
    await refused(h.ops.setAccountRule("999999", "auto_scan", true), /account/i);
    const bad = await h.call("PUT", `/mailroom/accounts/${a.accountId}/rules`, {
      headers: { authorization: "Bearer test-operator-token-0123456789" },
      body: { automation_name: "auto_everything", is_active: 1 },
    });
    assert.equal(bad.status, 422);
    assert.match(bad.body.message, /automation_name must be/);
    const none = await h.call("GET", `/mailroom/accounts/${a.accountId}/rules`);
    assert.equal(none.status, 401, "the operator token is required");
  } finally {
    await h.close();
  }
});

Deno.test("mailroom: redeliver sends the same event again as a new, freshly signed delivery", async () => {
  const h = await startMail();
  const bodies: { delivery: string; id: string; verified: boolean }[] = [];
  let secret = "";
  const rx = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    bodies.push({
      delivery: req.headers.get("x-gatehouse-delivery")!,
      id: JSON.parse(body).id,
      verified: await verifyWebhook({ secret, headers: req.headers, body }),
    });
    return new Response(null, { status: 204 });
  });
  try {
    const a = await h.account();
    const hook = await h.ops.registerWebhook(
      a.accountId,
      `http://127.0.0.1:${rx.addr.port}/`,
      ["rule.changed"],
    );
    secret = hook.secret;
    await h.ops.setAccountRule(a.accountId, "auto_scan", true);
    await h.server.idle();
    const [first] = await h.ops.listDeliveries(hook.webhook_id);
    assert.equal(first.state, "delivered");
    const again = await h.ops.redeliver(first.delivery_id);
    await h.server.idle();
    const log = await h.ops.listDeliveries(hook.webhook_id);
    assert.deepEqual(log.map((d) => [d.delivery_id, d.state]), [
      [again.delivery_id, "delivered"],
      [first.delivery_id, "delivered"],
    ]);
    assert.equal(log[0].event_id, first.event_id);
    assert.deepEqual(bodies.map((b) => [b.delivery, b.id, b.verified]), [
      [first.delivery_id, first.event_id, true],
      [again.delivery_id, first.event_id, true],
    ]);
    await refused(h.ops.redeliver("999999"), /No delivery 999999/);
  } finally {
    await h.close();
    await rx.shutdown();
  }
});
