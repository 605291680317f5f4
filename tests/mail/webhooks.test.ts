/**
 * Webhooks: a real receiver on loopback verifies every signature and fails each delivery's
 * first attempt; the server retries with backoff and logs every attempt.
 */
import assert from "node:assert/strict";
import { signWebhook, verifyWebhook } from "../../mail.ts";
import { PDF, startMail } from "./_harness.ts";

interface Received {
  event: { id: string; type: string; account_id: string; data: Record<string, unknown> };
  delivery: string;
  verified: boolean;
}

function receiver(secret: () => string, failFirst: boolean) {
  const seen = new Set<string>();
  const received: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = await req.text();
    const verified = await verifyWebhook({ secret: secret(), headers: req.headers, body });
    if (!verified) return new Response("bad signature", { status: 401 });
    const delivery = req.headers.get("x-gatehouse-delivery")!;
    if (failFirst && !seen.has(delivery)) {
      seen.add(delivery);
      return new Response("try again", { status: 503 });
    }
    received.push({ event: JSON.parse(body), delivery, verified });
    return new Response(null, { status: 204 });
  });
  return { server, received, url: `http://127.0.0.1:${server.addr.port}/hook` };
}

Deno.test("webhooks: signed, retried after a failed attempt, logged", async () => {
  const h = await startMail();
  let secret = "";
  const rx = receiver(() => secret, true);
  try {
    const a = await h.account();
    const hook = await h.ops.registerWebhook(a.accountId, rx.url);
    secret = hook.secret;
    assert.match(secret, /^whsec_/);
    const id = await h.receive(a.addressIds[0], "Tax Office");
    await a.client.open(a.addressIds[0], id);
    await h.ops.completeRequest(id, { scan: new Blob([PDF]), page_count: 1 });
    await a.client.updateSystemRule("auto_shred", 1);
    await a.client.updateSystemRule("auto_shred", 1); // repeat: no second event
    await h.server.idle();
    const types = rx.received.map((r) => r.event.type).sort();
    assert.deepEqual(types, ["item.received", "request.completed", "rule.changed"]);
    assert.ok(rx.received.every((r) => r.verified && r.event.account_id === a.accountId));
    const received = rx.received.find((r) => r.event.type === "item.received")!;
    assert.equal(received.event.data.mail_id, id);
    assert.equal(received.event.data.sender_name, "Tax Office");
    const completed = rx.received.find((r) => r.event.type === "request.completed")!;
    assert.deepEqual(
      [completed.event.data.action, completed.event.data.current_status],
      ["open", "opened"],
    );
    const rule = rx.received.find((r) => r.event.type === "rule.changed")!;
    assert.deepEqual(
      [rule.event.data.automation_name, rule.event.data.is_active],
      ["auto_shred", 1],
    );
    const log = await h.ops.listDeliveries(hook.webhook_id);
    assert.equal(log.length, 3);
    for (const d of log) {
      assert.equal(d.state, "delivered");
      assert.deepEqual(d.attempts.map((x) => x.status_code), [503, 204]);
      assert.equal(d.attempts[0].error, "HTTP 503");
    }
  } finally {
    await h.close();
    await rx.server.shutdown();
  }
});

Deno.test("webhooks: subscriptions filter events; a dead receiver ends failed after max attempts", async () => {
  const h = await startMail({
    webhooks: { baseDelayMs: 20, maxAttempts: 3, timeoutMs: 1000, allowTargets: ["127.0.0.1"] },
  });
  let secret = "";
  const rx = receiver(() => secret, false);
  try {
    const a = await h.account();
    const hook = await h.ops.registerWebhook(a.accountId, rx.url, ["rule.changed"]);
    secret = hook.secret;
    // a receiver that never answers 2xx
    const dead = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response("no", { status: 500 }),
    );
    const deadHook = await h.ops.registerWebhook(
      a.accountId,
      `http://127.0.0.1:${dead.addr.port}/`,
      ["item.received"],
    );
    await h.receive(a.addressIds[0]);
    await a.client.updateSystemRule("auto_scan", 1);
    await h.server.idle();
    await dead.shutdown();
    assert.deepEqual(rx.received.map((r) => r.event.type), ["rule.changed"]);
    const [failed] = await h.ops.listDeliveries(deadHook.webhook_id);
    assert.equal(failed.state, "failed");
    assert.equal(failed.attempts.length, 3);
    await assert.rejects(
      h.ops.registerWebhook(a.accountId, "ftp://example/"),
      (e) => (e as { code: number }).code === 19,
    );
    await assert.rejects(
      h.ops.registerWebhook(a.accountId, rx.url, ["item.exploded" as "rule.changed"]),
      (e) => (e as { code: number }).code === 19,
    );
  } finally {
    await h.close();
    await rx.server.shutdown();
  }
});

Deno.test("verifyWebhook rejects a wrong secret, a changed body and an old timestamp", async () => {
  const ts = Math.floor(Date.now() / 1000);
  const body = '{"type":"rule.changed"}';
  const headers = new Headers({
    "x-gatehouse-timestamp": String(ts),
    "x-gatehouse-signature": await signWebhook("whsec_a", ts, body),
  });
  assert.equal(await verifyWebhook({ secret: "whsec_a", headers, body }), true);
  assert.equal(await verifyWebhook({ secret: "whsec_b", headers, body }), false);
  assert.equal(await verifyWebhook({ secret: "whsec_a", headers, body: body + " " }), false);
  assert.equal(
    await verifyWebhook({ secret: "whsec_a", headers, body, now: (ts + 3600) * 1000 }),
    false,
  );
});

Deno.test("webhooks: a deactivated webhook gets nothing more; its pending deliveries end failed without another attempt", async () => {
  // retries far apart, so the first delivery is still pending when the webhook is deactivated
  const h = await startMail({
    webhooks: { baseDelayMs: 60_000, maxDelayMs: 60_000, allowTargets: ["127.0.0.1"] },
  });
  let calls = 0;
  const down = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    calls++;
    return new Response("down", { status: 503 });
  });
  try {
    const a = await h.account();
    const hook = await h.ops.registerWebhook(a.accountId, `http://127.0.0.1:${down.addr.port}/`);
    await h.receive(a.addressIds[0], "First");
    for (let i = 0; i < 200 && calls < 1; i++) await new Promise((r) => setTimeout(r, 10));
    const [pending] = await h.ops.listDeliveries(hook.webhook_id);
    assert.deepEqual([pending.state, pending.attempts.length], ["pending", 1]);

    await h.ops.deactivateWebhook(hook.webhook_id);
    await h.server.idle(); // the retry waiting a minute is dropped, not attempted
    const [ended] = await h.ops.listDeliveries(hook.webhook_id);
    assert.deepEqual([ended.state, ended.attempts.length], ["failed", 1]);
    assert.equal(calls, 1);
    const detail = await h.ops.getAccount(a.accountId);
    assert.deepEqual(detail.webhooks.map((w) => [w.webhook_id, w.active]), [
      [hook.webhook_id, false],
    ]);
    // later events are delivered to nobody; a redelivery is refused (19) and sends nothing
    await h.receive(a.addressIds[0], "Second");
    await h.server.idle();
    assert.equal((await h.ops.listDeliveries(hook.webhook_id)).length, 1);
    await assert.rejects(
      h.ops.redeliver(ended.delivery_id),
      (e) => (e as { code: number }).code === 19,
    );
    assert.equal((await h.ops.listDeliveries(hook.webhook_id)).length, 1);
    assert.equal(calls, 1);
    // idempotent
    assert.equal((await h.ops.deactivateWebhook(hook.webhook_id)).status, 1);
  } finally {
    await h.close();
    await down.shutdown();
  }
});
