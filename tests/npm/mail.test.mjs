// The npm mirror's `./mail` in Node 20: its server on a libSQL temp file behind node:http on
// loopback, driven by its typed clients. Build first: deno task build:npm. Run: node --test tests/npm/
import { test } from "node:test";
import assert from "node:assert/strict";
import { serve } from "./_serve.mjs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import {
  createMailServer,
  MailApiError,
  MailClient,
  MailroomClient,
  verifyWebhook,
} from "../../npm/mail.js";

const OPERATOR = "node-operator-token-0123456789";
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

test("npm ./mail: server and clients in Node", async () => {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-mail-node-"));
  const db = createClient({ url: `file:${join(dir, "mail.db")}` });
  const mail = await createMailServer({
    client: db,
    blobDir: join(dir, "blobs"),
    operatorToken: OPERATOR,
    webhooks: { baseDelayMs: 20, allowTargets: ["127.0.0.1"] },
  });
  const http = await serve(mail.fetch);
  const received = [];
  let secret = "";
  const hooks = await serve(async (req) => {
    const body = await req.text();
    const ok = await verifyWebhook({ secret, headers: req.headers, body });
    if (ok) received.push(JSON.parse(body).type);
    return new Response(null, { status: ok ? 204 : 401 });
  });
  try {
    const base = `${http.url}/api/account-docs/v2`;
    const ops = new MailroomClient({ baseUrl: base, operatorToken: OPERATOR });
    const { account_id } = await ops.createAccount({ name: "Node", sandbox: true });
    const { user_id } = await ops.createUser(account_id, "Nora");
    const { address_id } = await ops.createAddress(account_id, user_id);
    const { api_key } = await ops.createApiKey(account_id);
    secret = (await ops.registerWebhook(account_id, `${hooks.url}/hook`)).secret;
    const client = new MailClient({ baseUrl: base, apiKey: api_key });

    const ids = [];
    for (let i = 0; i < 22; i++) {
      const { mail_id } = await ops.receiveItem({
        address_id,
        sender_name: `Sender ${i}`,
        envelope: new Blob([PNG], { type: "image/png" }),
      });
      ids.push(mail_id);
    }
    const page = await client.listItems({ sort_order: "asc" });
    assert.deepEqual([page.data.length, page.total, page.per_page], [20, 22, 20]);
    let n = 0;
    for await (const _ of client.items()) n++;
    assert.equal(n, 22);
    const cover = await fetch(page.data[0].cover_image);
    assert.deepEqual(Buffer.from(await cover.arrayBuffer()), PNG);

    await client.open(address_id, ids.slice(0, 2));
    await client.cancelOpen(address_id, ids[1]);
    await ops.completeRequest(ids[0], {
      scan: new Blob(["%PDF-1.4 node"], { type: "application/pdf" }),
      page_count: 1,
    });
    const [opened] = (await client.listItems({ sort_order: "asc" })).data;
    assert.equal(opened.current_status, "opened");
    assert.equal(await (await fetch(opened.pdf_content)).text(), "%PDF-1.4 node");

    await assert.rejects(client.rescan(address_id, ids[1]), (err) => {
      assert.ok(err instanceof MailApiError);
      assert.deepEqual([err.status, err.code], [403, 471]);
      return true;
    });
    await client.updateSystemRule("auto_scan", 1);
    const rules = await client.listSystemRules();
    assert.equal(rules.data[0].auto_scan, true);
    const { mail_id } = await client.createTestItem();
    assert.equal((await ops.getItem(mail_id)).current_status, "open_requested");
    await mail.idle();
    assert.ok(received.includes("item.received"));
    assert.ok(received.includes("request.completed"));
    assert.ok(received.includes("rule.changed"));
  } finally {
    await mail.close();
    await http.close();
    await hooks.close();
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
});
