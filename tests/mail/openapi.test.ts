/**
 * The OpenAPI document: valid OpenAPI 3.1 (checked by @seriousme/openapi-schema-validator),
 * every example valid against its schema, and the real answers of every operation — each one
 * called through the typed clients — matching it (the harness checks every answer).
 */
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { openApiDocument } from "../../lib/mail/openapi.ts";
import { schemaValidator, validate } from "./_openapi.ts";
import { PDF, PNG, startMail } from "./_harness.ts";

type Json = Record<string, unknown>;
const BASE = "/api/account-docs/v2";

Deno.test("openapi: the document validates against the OpenAPI 3.1 schema", async () => {
  const doc = openApiDocument(BASE);
  const result = await new Validator().validate(doc);
  assert.deepEqual(result.errors, undefined);
  assert.equal(result.valid, true);
  // the validator does fail a broken document: a response without its description
  const broken = structuredClone(doc) as unknown as { paths: Record<string, Record<string, Json>> };
  delete (broken.paths["/items"].get.responses as Record<string, Json>)["200"].description;
  assert.equal((await new Validator().validate(broken)).valid, false);
});

Deno.test("openapi: every operation and webhook has a description, and one operationId style", () => {
  const doc = openApiDocument(BASE);
  const ops: [string, Json][] = [];
  for (const group of [doc.paths, doc.webhooks] as Record<string, Record<string, Json>>[]) {
    for (const [path, item] of Object.entries(group)) {
      for (const [method, op] of Object.entries(item)) ops.push([`${method} ${path}`, op]);
    }
  }
  assert.ok(ops.length >= 44, `${ops.length} operations`);
  const undescribed = ops.filter(([, op]) => String(op.description ?? "").length < 80);
  assert.deepEqual(undescribed.map(([where]) => where), []);
  const notCamel = ops.filter(([, op]) => !/^[a-z][a-zA-Z]*$/.test(String(op.operationId)));
  assert.deepEqual(notCamel.map(([where, op]) => `${where}: ${op.operationId}`), []);
  const ids = ops.map(([, op]) => op.operationId);
  assert.equal(new Set(ids).size, ids.length, "operationIds are unique");
  assert.equal(
    (doc.webhooks as Record<string, { post: Json }>)["item.received"].post.operationId,
    "onItemReceived",
  );
});

Deno.test("openapi: a 401 whose body code is 429 says the code is the API's own, not HTTP 429", () => {
  const doc = openApiDocument("/api/account-docs/v2") as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
  };
  const unauthorized = doc.paths["/items"].get.responses["401"].description;
  assert.match(unauthorized, /- `429`: the API key .* is missing or not correct/);
  assert.ok(
    unauthorized.includes(
      "The `code` of the body is this API's own error code, not an HTTP status: `429` is a " +
        "missing or wrong API key, answered with HTTP 401 (too many requests are HTTP 429 with " +
        "code `434`).",
    ),
    unauthorized,
  );
  // every answer whose body code looks like another HTTP status says so
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const [status, r] of Object.entries(op.responses ?? {})) {
        const codes = [...(r.description ?? "").matchAll(/^- `(\d+)`/gm)].map((m) => Number(m[1]));
        if (codes.some((c) => c !== Number(status) && c >= 100 && c <= 599)) {
          assert.match(r.description, /not an HTTP status/, `${method} ${path} ${status}`);
        }
      }
    }
  }
});

Deno.test("openapi: every request, response, parameter and webhook example fits its schema", () => {
  const doc = openApiDocument(BASE);
  const ajv = schemaValidator(doc);
  const problems: string[] = [];
  let examples = 0;
  const media = (where: string, m: Json) => {
    const schema = m.schema as Json;
    const values: unknown[] = m.example !== undefined
      ? [m.example]
      : Object.values((m.examples ?? {}) as Record<string, { value: unknown }>).map((e) => e.value);
    assert.ok(values.length > 0, `${where} has an example`);
    for (const v of values) {
      examples++;
      if (typeof v === "string" && schema.type === "string") continue; // bytes, pages
      if (where.includes("multipart/form-data")) continue; // files shown as placeholders
      problems.push(...validate(ajv, schema, v).map((p) => `${where}: ${p}`));
    }
  };
  const operations = [
    ...Object.entries(doc.paths as Record<string, Record<string, Json>>),
    ...Object.entries(doc.webhooks as Record<string, Record<string, Json>>),
  ];
  for (const [path, item] of operations) {
    for (const [method, op] of Object.entries(item)) {
      const where = `${method} ${path}`;
      for (const p of (op.parameters ?? []) as Json[]) {
        assert.ok(p.example !== undefined, `${where} parameter ${p.name} has an example`);
        examples++;
        problems.push(...validate(ajv, p.schema as Json, p.example).map((x) => `${where}: ${x}`));
      }
      const body = op.requestBody as { content: Record<string, Json> } | undefined;
      for (const [type, m] of Object.entries(body?.content ?? {})) media(`${where} ${type}`, m);
      for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
        for (const [type, m] of Object.entries((r.content ?? {}) as Record<string, Json>)) {
          if (type.startsWith("image/") || type === "application/pdf") continue; // bytes
          media(`${where} ${status} ${type}`, m);
        }
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(examples > 200, `${examples} examples checked`);
});

Deno.test("openapi: the real answers of every operation match the document", async () => {
  const h = await startMail();
  try {
    const served = await (await fetch(`${h.base}/openapi.json`)).json();
    assert.deepEqual(served, openApiDocument(BASE));
    const index = await (await fetch(`${h.base}/`)).json();
    assert.equal(index.reference, `${h.base}/docs`);
    for (const path of ["/docs", "/docs/assets/init.js", "/docs/assets/reference.js"]) {
      const r = await fetch(h.base + path);
      assert.equal(r.status, 200, path);
      await r.body?.cancel();
    }

    // customer side, through MailClient
    const s = await h.account({ sandbox: true, users: 2 });
    const addr = s.addressIds[0];
    const c = s.client;
    const { mail_id: id } = await c.createTestItem({ sender_name: "Bank" });
    await c.open(addr, id);
    await c.cancelOpen(addr, id);
    await c.open(addr, id);
    await c.completeTestRequest(id);
    await c.rescan(addr, id, { rescan_type: 2, comment: "blurred" });
    await c.cancelRescan(addr, id);
    const other = (await c.createTestItem()).mail_id;
    await c.shred(addr, other, { delete_digital_copy: true });
    await c.cancelShred(addr, other);
    await c.discard(addr, other);
    await c.cancelDiscard(addr, other);
    await c.updateSystemRule("auto_scan", 1);
    const page = await c.listItems({ sort_order: "asc" });
    assert.ok(page.data.some((i) => i.pdf_content !== null));
    await c.listItems({ page: 9 });
    await c.listSystemRules();
    await c.openApi();
    const scan = page.data.find((i) => i.pdf_content)!.pdf_content!;
    assert.equal(new TextDecoder().decode((await c.downloadFile(scan)).slice(0, 5)), "%PDF-");
    await c.downloadFile(page.data[0].cover_image!);

    // error answers of the customer side
    for (
      const [path, init] of [
        ["/items", { headers: { "x-api-key": "gh_live_wrong" } }],
        ["/items?page=0", { headers: { "x-api-key": s.apiKey } }],
        ["/items", { method: "DELETE" }],
        ["/nowhere", {}],
        [`/addresses/999/items/actions/open`, {
          method: "POST",
          headers: { "x-api-key": s.apiKey },
          body: JSON.stringify({ mail_ids: [id] }),
        }],
        [`/addresses/${addr}/items/actions/open`, {
          method: "POST",
          headers: { "x-api-key": s.apiKey },
          body: JSON.stringify({ mail_ids: [id] }),
        }],
        [`/files/scans/x.pdf?expires=1&signature=x`, {}],
      ] as [string, RequestInit][]
    ) {
      const r = await fetch(h.base + path, init);
      assert.ok(r.status >= 400, path);
      await r.body?.cancel();
    }

    // mailroom side, through MailroomClient
    const ops = h.ops;
    const { account_id } = await ops.createAccount({ name: "Docs Co" });
    const { user_id } = await ops.createUser(account_id, "Dee");
    const { address_id } = await ops.createAddress(account_id, user_id, "Front desk");
    const key = await ops.createApiKey(account_id, "crm");
    await ops.updateAccount(account_id, { api_access: true });
    const rx = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response(null, { status: 204 }),
    );
    try {
      const hook = await ops.registerWebhook(account_id, `http://127.0.0.1:${rx.addr.port}/`);
      const { mail_id } = await ops.receiveItem({
        address_id,
        sender_name: "Tax Office",
        envelope: new Blob([PNG], { type: "image/png" }),
      });
      await h.server.idle();
      const [delivery] = await ops.listDeliveries(hook.webhook_id);
      const signed = await ops.getDelivery(delivery.delivery_id);
      const again = await ops.redeliver(delivery.delivery_id);
      assert.notEqual(again.delivery_id, delivery.delivery_id);
      await h.server.idle();
      await ops.deactivateWebhook(hook.webhook_id);
      await ops.setAccountRule(account_id, "auto_scan", true);
      assert.equal((await ops.listAccountRules(account_id)).data[0].auto_scan, true);
      assert.equal((await ops.listAccountItems(account_id)).data[0].mail_id, mail_id);
      assert.equal(JSON.parse(signed.body).data.mail_id, mail_id);
      const detail = await ops.getAccount(account_id);
      assert.deepEqual(detail.webhooks.map((w) => [w.webhook_id, w.active]), [
        [hook.webhook_id, false],
      ]);
      assert.equal((await ops.findApiKeys(key.api_key.slice(0, 12)))[0].key_id, key.key_id);
      assert.ok((await ops.listAccounts()).total >= 2);
      await ops.getItem(mail_id);
      const customer = await h.account();
      const first = await h.receive(customer.addressIds[0]);
      const second = await h.receive(customer.addressIds[0]);
      await customer.client.open(customer.addressIds[0], [first, second]);
      assert.equal((await ops.listRequests()).length >= 2, true);
      await ops.completeRequest(first, { scan: new Blob([PDF]), page_count: 1 });
      await ops.failRequest(second, "sealed");
      await ops.revokeApiKey(key.key_id);
      await h.server.idle();
    } finally {
      await rx.shutdown();
    }

    // every operation of the document was answered with its success status at least once
    const doc = openApiDocument(BASE);
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      for (const [method, op] of Object.entries(item)) {
        const ok = Object.keys(op.responses as Json).find((s) => s.startsWith("2"))!;
        if (!h.checker.seen.has(`${method.toUpperCase()} ${path} ${ok}`)) {
          missing.push(`${method} ${path}`);
        }
      }
    }
    assert.deepEqual(missing, []);
    assert.deepEqual(h.checker.problems, []);
  } finally {
    await h.close();
  }
});
