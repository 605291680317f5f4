/** The mailroom API's own input checks and registration rules. */
import assert from "node:assert/strict";
import type { MailApiError } from "../../mail.ts";
import { OPERATOR_TOKEN, PNG, startMail } from "./_harness.ts";

const code = (n: number) => (e: unknown) => (e as MailApiError).code === n;
const notFound = (n: number) => (e: unknown) =>
  (e as MailApiError).code === n && (e as MailApiError).status === 404;

Deno.test("mailroom: registration and receipt validate their input", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const b = await h.account();
    await assert.rejects(h.ops.createAccount({ name: "" }), code(19));
    // unknown records are not found (404, code 9410), as the customer API's address and item
    await assert.rejects(h.ops.createUser("99999", "Nobody"), notFound(9410));
    await assert.rejects(h.ops.createAddress(a.accountId, b.userIds[0]), notFound(9410));
    await assert.rejects(h.ops.createApiKey("99999"), notFound(9410));
    await assert.rejects(h.ops.revokeApiKey("99999"), notFound(9410));
    await assert.rejects(h.ops.updateAccount("99999", { status: "closed" }), notFound(9410));
    await assert.rejects(h.ops.getAccount("not-an-id"), notFound(9410));
    await assert.rejects(h.ops.listDeliveries("99999"), notFound(9410));
    await assert.rejects(h.ops.deactivateWebhook("99999"), notFound(9410));
    await assert.rejects(h.ops.getDelivery("99999"), notFound(9410));
    await assert.rejects(h.ops.redeliver("0"), notFound(9410));
    await assert.rejects(h.ops.getItem("x"), notFound(14));
    // and asking for them changed nothing
    assert.equal((await h.ops.listAccounts()).total, 2);
    assert.equal((await h.ops.getAccount(a.accountId)).users.length, 1);
    assert.equal((await h.ops.getAccount(b.accountId)).addresses.length, 1);
    const png = new Blob([PNG], { type: "image/png" });
    await assert.rejects(
      h.ops.receiveItem({ address_id: "99999", sender_name: "X", envelope: png }),
      code(89),
    );
    await assert.rejects(
      h.ops.receiveItem({
        address_id: a.addressIds[0],
        sender_name: "X",
        envelope: new Blob(["hi"], { type: "text/plain" }),
      }),
      code(19),
    );
    await assert.rejects(
      h.ops.receiveItem({
        address_id: a.addressIds[0],
        sender_name: "X",
        item_type: "spaceship",
        envelope: png,
      }),
      code(19),
    );
    const { mail_id } = await h.ops.receiveItem({
      address_id: a.addressIds[0],
      sender_name: "Parcel Co",
      item_type: "package",
      envelope: png,
    });
    await a.client.open(a.addressIds[0], mail_id);
    await assert.rejects(
      h.ops.completeRequest(mail_id, { scan: new Blob(["not a pdf"]) }),
      code(19),
    );
    await assert.rejects(h.ops.getItem("99999"), code(14));
    const item = await h.ops.getItem(mail_id);
    assert.equal(item.item_type, "package");
    assert.equal(item.current_status, "open_requested");
    // only the envelope made it to the blob store
    const files: string[] = [];
    for await (const e of Deno.readDir(`${h.dir}/blobs/covers`)) files.push(e.name);
    assert.equal(files.length, 1);
    // without the operator token, nothing
    const r = await fetch(`${h.base}/mailroom/accounts`, { method: "POST", body: "{}" });
    assert.deepEqual([r.status, (await r.json()).code], [401, 429]);
    const big = await fetch(`${h.base}/mailroom/accounts`, {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      body: JSON.stringify({ name: "x".repeat(300) }),
    });
    assert.deepEqual([big.status, (await big.json()).code], [422, 19]);
  } finally {
    await h.close();
  }
});
