/** Rules on arrival: what each combination of active rules files, and toggles' reach. */
import assert from "node:assert/strict";
import type { AutomationName, ItemStatus } from "../../mail.ts";
import { PDF, startMail } from "./_harness.ts";

const CASES: [AutomationName[], ItemStatus, string | null][] = [
  [[], "received", null],
  [["auto_scan"], "open_requested", "auto_scan"],
  [["auto_shred"], "shred_requested", "auto_shred"],
  [["auto_discard"], "discard_requested", "auto_discard"],
  [["auto_shred", "auto_discard"], "shred_requested", "auto_shred"], // shred wins
  [["auto_scan", "auto_shred"], "open_requested", "auto_scan"],
  [["auto_scan", "auto_discard"], "open_requested", "auto_scan"],
  [["auto_scan", "auto_shred", "auto_discard"], "open_requested", "auto_scan"],
];

Deno.test("rules on arrival: each combination files the documented request", async () => {
  const h = await startMail();
  try {
    for (const [active, status, note] of CASES) {
      const a = await h.account();
      for (const name of active) await a.client.updateSystemRule(name, 1);
      const id = await h.receive(a.addressIds[0]);
      const item = await h.ops.getItem(id);
      assert.equal(item.current_status, status, active.join("+"));
      if (note) {
        assert.deepEqual(
          item.status_history.map((s) => [s.status, s.source, s.note]),
          [["received", "mailroom", null], [status, "rule", note]],
        );
      } else assert.equal(item.status_history.length, 1);
    }
  } finally {
    await h.close();
  }
});

Deno.test("scan then destroy: with auto_scan and auto_shred the shred follows the scan", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    await a.client.updateSystemRule("auto_scan", true);
    await a.client.updateSystemRule("auto_shred", true);
    const id = await h.receive(a.addressIds[0]);
    await h.ops.completeRequest(id, { scan: new Blob([PDF]), page_count: 1 });
    let item = await h.ops.getItem(id);
    assert.equal(item.current_status, "shred_requested");
    assert.ok(item.pdf_content);
    await h.ops.completeRequest(id);
    item = await h.ops.getItem(id);
    assert.equal(item.current_status, "shredded");
    assert.deepEqual(item.status_history.map((s) => s.status), [
      "received",
      "open_requested",
      "opened",
      "shred_requested",
      "shredded",
    ]);
    // cancelling the auto open drops the follow-up too
    const other = await h.receive(a.addressIds[0]);
    await a.client.cancelOpen(a.addressIds[0], other);
    assert.equal((await h.ops.getItem(other)).current_status, "received");
    await a.client.open(a.addressIds[0], other);
    await h.ops.completeRequest(other, { scan: new Blob([PDF]) });
    assert.equal((await h.ops.getItem(other)).current_status, "opened");
  } finally {
    await h.close();
  }
});

Deno.test("toggling a rule affects only later arrivals, for every user", async () => {
  const h = await startMail();
  try {
    const a = await h.account({ users: 2 });
    const before = await h.receive(a.addressIds[1]);
    await a.client.updateSystemRule("auto_discard", 1);
    const rows = (await a.client.listSystemRules()).data;
    assert.ok(rows.every((r) => r.auto_discard));
    const after = await h.receive(a.addressIds[1]);
    assert.equal((await h.ops.getItem(before)).current_status, "received");
    assert.equal((await h.ops.getItem(after)).current_status, "discard_requested");
    await a.client.updateSystemRule("auto_discard", 0);
    const later = await h.receive(a.addressIds[0]);
    assert.equal((await h.ops.getItem(later)).current_status, "received");
    assert.equal((await h.ops.getItem(after)).current_status, "discard_requested");
    // a repeat keeps last_changed_at
    const stamp = (await a.client.listSystemRules()).data.map((r) => r.last_changed_at);
    await new Promise((r) => setTimeout(r, 1100));
    await a.client.updateSystemRule("auto_discard", 0);
    assert.deepEqual((await a.client.listSystemRules()).data.map((r) => r.last_changed_at), stamp);
  } finally {
    await h.close();
  }
});
