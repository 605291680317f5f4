/** The customer endpoints: items list, rules list and update, actions, sandbox, file links. */
import assert from "node:assert/strict";
import { PAGE_SIZE } from "../../mail.ts";
import { PDF, PNG, startMail } from "./_harness.ts";

Deno.test("GET /items: the account's items, 20 a page, by received time, full shape", async () => {
  const h = await startMail();
  try {
    const a = await h.account({ users: 2 });
    const b = await h.account();
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      // received out of order; ties broken by id
      const at = new Date(t0 + ((i * 7) % 25) * 60_000);
      ids.push(await h.receive(a.addressIds[i % 2], `Sender ${i}`, at));
    }
    await h.receive(b.addressIds[0]);
    const p1 = await h.call("GET", "/items", { key: a.apiKey });
    assert.equal(p1.status, 200);
    assert.equal(p1.body.data.length, PAGE_SIZE);
    assert.deepEqual(
      [p1.body.current_page, p1.body.per_page, p1.body.total],
      [1, 20, 25],
    );
    const p2 = await h.call("GET", "/items?sort_order=desc&page=2", { key: a.apiKey });
    assert.equal(p2.body.data.length, 5);
    const desc = [...p1.body.data, ...p2.body.data].map((i: { received_at: string }) =>
      i.received_at
    );
    assert.deepEqual(desc, [...desc].sort().reverse());
    const asc = await h.call("GET", "/items?sort_order=asc", { key: a.apiKey });
    assert.equal(asc.body.data[0].received_at, "2026-01-01 00:00:00");
    const empty = await h.call("GET", "/items?page=3", { key: a.apiKey });
    assert.deepEqual(empty.body, { data: [], current_page: 3, per_page: 20, total: 25 });
    const item = asc.body.data[0];
    assert.deepEqual(Object.keys(item).sort(), [
      "address_id",
      "cover_image",
      "current_folder_name",
      "current_status",
      "item_type",
      "mail_id",
      "page_count",
      "pdf_content",
      "received_at",
      "sender_name",
      "status_history",
    ]);
    assert.equal(item.sender_name, "Sender 0");
    assert.equal(item.item_type, "letter");
    assert.equal(item.pdf_content, null);
    assert.equal(item.current_folder_name, "Inbox");
    assert.deepEqual(item.status_history, [
      { status: "received", changed_at: "2026-01-01 00:00:00", source: "mailroom", note: null },
    ]);
    const cover = await fetch(item.cover_image);
    assert.equal(cover.headers.get("content-type"), "image/png");
    assert.deepEqual(new Uint8Array(await cover.arrayBuffer()), PNG);
  } finally {
    await h.close();
  }
});

Deno.test("rules list: one row per user; the toggle sets a rule for all users", async () => {
  const h = await startMail();
  try {
    const a = await h.account({ users: 3 });
    const list = () =>
      h.call("GET", "/user-defined-rules/system-user-defined-rules", {
        key: a.apiKey,
      });
    const r = await list();
    assert.equal(r.status, 200);
    assert.equal(r.body.total, 3);
    assert.equal(r.body.per_page, 20);
    assert.deepEqual(Object.keys(r.body.data[0]).sort(), [
      "auto_discard",
      "auto_scan",
      "auto_shred",
      "last_changed_at",
      "user_full_name",
      "user_id",
    ]);
    assert.ok(r.body.data.every((u: { auto_scan: boolean }) => u.auto_scan === false));
    const put = await h.call("PUT", "/user-defined-rules/update-system-user-defined-rule", {
      key: a.apiKey,
      body: { automation_name: "auto_scan", is_active: 1 },
    });
    assert.deepEqual(put.body, { status: 1, message: "Rule status updated successfully." });
    const after = await list();
    assert.ok(after.body.data.every((u: { auto_scan: boolean }) => u.auto_scan === true));
    assert.ok(after.body.data.every((u: { auto_shred: boolean }) => u.auto_shred === false));
    const asc = await h.call(
      "GET",
      "/user-defined-rules/system-user-defined-rules?sort_order=asc",
      {
        key: a.apiKey,
      },
    );
    assert.deepEqual(
      asc.body.data.map((u: { user_id: string }) => u.user_id),
      [...a.userIds],
    );
    assert.deepEqual(
      after.body.data.map((u: { user_id: string }) => u.user_id),
      [...a.userIds].reverse(),
    );
  } finally {
    await h.close();
  }
});

Deno.test("actions: 100 items at once, all-or-nothing, idempotent repeats, options kept", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const addr = a.addressIds[0];
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push(await h.receive(addr));
    await a.client.open(addr, ids.slice(0, 1));
    await h.ops.completeRequest(ids[0], { scan: new Blob([PDF]), page_count: 4 });
    // one opened item among 100: the whole request fails and nothing changes
    await assert.rejects(a.client.open(addr, ids));
    const pending0 = await h.ops.listRequests();
    assert.equal(pending0.length, 0);
    await a.client.open(addr, ids.slice(1));
    assert.equal((await h.ops.listRequests()).length, 99);
    // repeating holds already: 200, no duplicate history
    const r = await a.client.open(addr, ids.slice(1));
    assert.equal(r.status, 1);
    const item = await h.ops.getItem(ids[1]);
    assert.equal(item.status_history.length, 2);
    // options reach the mailroom
    await a.client.rescan(addr, ids[0], { rescan_type: 2, comment: "blurry" });
    const fresh = await h.receive(addr);
    await a.client.shred(addr, fresh, { delete_digital_copy: true });
    const pending = await h.ops.listRequests(1000);
    const rescan = pending.find((p) => p.mail_id === ids[0]);
    assert.deepEqual(rescan?.options, { rescan_type: 2, comment: "blurry" });
    const shred = pending.find((p) => p.mail_id === fresh);
    assert.deepEqual([shred?.action, shred?.options], ["shred", { delete_digital_copy: true }]);
    assert.equal((await h.ops.getItem(ids[0])).status_history.at(-1)?.note, "blurry");
  } finally {
    await h.close();
  }
});

Deno.test("scans: pdf_content after opening, replaced by a rescan, deleted with the copy", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const addr = a.addressIds[0];
    const id = await h.receive(addr);
    await a.client.open(addr, id);
    await h.ops.completeRequest(id, { scan: new Blob([PDF]), page_count: 2 });
    let [item] = (await a.client.listItems()).data;
    assert.equal(item.current_status, "opened");
    assert.equal(item.current_folder_name, "Scanned");
    assert.equal(item.page_count, 2);
    const pdf = await fetch(item.pdf_content!);
    assert.equal(pdf.headers.get("content-type"), "application/pdf");
    assert.deepEqual(new Uint8Array(await pdf.arrayBuffer()), PDF);
    const firstKey = new URL(item.pdf_content!).pathname;
    await a.client.rescan(addr, id);
    const pdf2 = new TextEncoder().encode("%PDF-1.4 second scan");
    await h.ops.completeRequest(id, { scan: new Blob([pdf2]), page_count: 3 });
    [item] = (await a.client.listItems()).data;
    assert.notEqual(new URL(item.pdf_content!).pathname, firstKey);
    assert.equal(item.page_count, 3);
    await a.client.shred(addr, id, { delete_digital_copy: true });
    await h.ops.completeRequest(id);
    [item] = (await a.client.listItems()).data;
    assert.equal(item.current_status, "shredded");
    assert.equal(item.current_folder_name, "Shredded");
    assert.equal(item.pdf_content, null);
    // the shred without delete keeps the scan
    const keep = await h.receive(addr);
    await a.client.open(addr, keep);
    await h.ops.completeRequest(keep, { scan: new Blob([PDF]) });
    await a.client.discard(addr, keep, { delete_digital_copy: false });
    await h.ops.completeRequest(keep);
    const kept = await h.ops.getItem(keep);
    assert.equal(kept.current_status, "discarded");
    assert.ok(kept.pdf_content);
    const blobs: string[] = [];
    for await (const e of Deno.readDir(`${h.dir}/blobs/scans`)) blobs.push(e.name);
    assert.equal(blobs.length, 1, "replaced and deleted scans are gone from the blob store");
  } finally {
    await h.close();
  }
});

Deno.test("sandbox: a test key creates items on demand and completes their requests", async () => {
  const h = await startMail();
  try {
    const s = await h.account({ sandbox: true });
    assert.match(s.apiKey, /^gh_test_/);
    const created = await s.client.createTestItem({ sender_name: "ACME Bank" });
    assert.equal(created.status, 1);
    const [item] = (await s.client.listItems()).data;
    assert.equal(item.mail_id, created.mail_id);
    assert.equal(item.status_history[0].source, "sandbox");
    const svg = await fetch(item.cover_image!);
    assert.equal(svg.headers.get("content-type"), "image/svg+xml");
    assert.match(await svg.text(), /ACME Bank/);
    await s.client.open(item.address_id, item.mail_id);
    await s.client.completeTestRequest(item.mail_id);
    const [opened] = (await s.client.listItems()).data;
    assert.equal(opened.current_status, "opened");
    const pdf = await fetch(opened.pdf_content!);
    assert.match(await pdf.text(), /^%PDF-1\.4/);
    // live keys cannot
    const live = await h.account();
    assert.match(live.apiKey, /^gh_live_/);
    const r = await h.call("POST", "/sandbox/items", { key: live.apiKey, body: {} });
    assert.deepEqual([r.status, r.body.code], [403, 433]);
    const bad = await h.call("POST", "/sandbox/items", {
      key: s.apiKey,
      body: { item_type: "spaceship" },
    });
    assert.deepEqual([bad.status, bad.body.code], [422, 19]);
  } finally {
    await h.close();
  }
});

Deno.test("concurrent actions on the same items: one wins, the other changes nothing", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const addr = a.addressIds[0];
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await h.receive(addr));
    const results = await Promise.allSettled([
      a.client.open(addr, ids),
      a.client.shred(addr, ids.slice(10)),
      a.client.discard(addr, ids.slice(20)),
    ]);
    const won = results.filter((r) => r.status === "fulfilled").length;
    assert.ok(won >= 1);
    for (const r of results) {
      if (r.status === "rejected") assert.equal((r.reason as { code: number }).code, 471);
    }
    const statuses = new Set<string>();
    for (const id of ids.slice(20)) statuses.add((await h.ops.getItem(id)).current_status);
    assert.equal(statuses.size, 1, "the last ten items all moved with one request");
    const total = (await h.ops.listRequests(1000)).length;
    const first = results.findIndex((r) => r.status === "fulfilled");
    assert.equal(total, [30, 20, 10][first]);
  } finally {
    await h.close();
  }
});
