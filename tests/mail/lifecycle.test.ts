/**
 * Every item transition through the real API: each state × each customer operation, allowed
 * (new state) or refused (471, nothing changes); plus the mailroom's completions and failures.
 */
import assert from "node:assert/strict";
import { type ItemStatus, MailApiError } from "../../mail.ts";
import { type Account, type Harness, PDF, startMail } from "./_harness.ts";

type Op = "open" | "rescan" | "shred" | "discard" | `cancel_${string}`;
const OPS: Op[] = [
  "open",
  "rescan",
  "shred",
  "discard",
  "cancel_open",
  "cancel_rescan",
  "cancel_shred",
  "cancel_discard",
];

/** Expected result per state and operation: the new state, or null for 471. */
const TABLE: Record<ItemStatus, Partial<Record<Op, ItemStatus>>> = {
  received: {
    open: "open_requested",
    shred: "shred_requested",
    discard: "discard_requested",
  },
  open_requested: { open: "open_requested", cancel_open: "received" },
  opened: { rescan: "rescan_requested", shred: "shred_requested", discard: "discard_requested" },
  rescan_requested: { rescan: "rescan_requested", cancel_rescan: "opened" },
  shred_requested: { shred: "shred_requested", cancel_shred: "received" },
  shredded: {},
  discard_requested: { discard: "discard_requested", cancel_discard: "received" },
  discarded: {},
};

async function run(a: Account, address: string, op: Op, id: string): Promise<void> {
  const c = a.client;
  switch (op) {
    case "open":
      await c.open(address, id);
      return;
    case "rescan":
      await c.rescan(address, id);
      return;
    case "shred":
      await c.shred(address, id);
      return;
    case "discard":
      await c.discard(address, id);
      return;
    case "cancel_open":
      await c.cancelOpen(address, id);
      return;
    case "cancel_rescan":
      await c.cancelRescan(address, id);
      return;
    case "cancel_shred":
      await c.cancelShred(address, id);
      return;
    case "cancel_discard":
      await c.cancelDiscard(address, id);
      return;
  }
}

async function itemIn(h: Harness, a: Account, status: ItemStatus): Promise<string> {
  const address = a.addressIds[0];
  const id = await h.receive(address);
  const complete = () => h.ops.completeRequest(id, { scan: new Blob([PDF]), page_count: 2 });
  const path: Record<ItemStatus, () => Promise<unknown>> = {
    received: async () => {},
    open_requested: () => a.client.open(address, id),
    opened: async () => {
      await a.client.open(address, id);
      await complete();
    },
    rescan_requested: async () => {
      await path.opened();
      await a.client.rescan(address, id, { rescan_type: 2, comment: "blurry" });
    },
    shred_requested: () => a.client.shred(address, id),
    shredded: async () => {
      await a.client.shred(address, id);
      await complete();
    },
    discard_requested: () => a.client.discard(address, id),
    discarded: async () => {
      await a.client.discard(address, id);
      await complete();
    },
  };
  await path[status]();
  return id;
}

async function statusOf(h: Harness, id: string): Promise<ItemStatus> {
  return (await h.ops.getItem(id)).current_status;
}

Deno.test("every state × every customer operation: allowed moves, refused ones answer 471", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const address = a.addressIds[0];
    for (const [from, row] of Object.entries(TABLE) as [ItemStatus, typeof TABLE.received][]) {
      for (const op of OPS) {
        const id = await itemIn(h, a, from);
        assert.equal(await statusOf(h, id), from);
        const want = row[op];
        const historyBefore = (await h.ops.getItem(id)).status_history.length;
        if (want) {
          await run(a, address, op, id);
          assert.equal(await statusOf(h, id), want, `${from} --${op}--> ${want}`);
          const added = (await h.ops.getItem(id)).status_history.length - historyBefore;
          assert.equal(added, want === from ? 0 : 1, `${from} ${op}: history entries`);
        } else {
          await assert.rejects(run(a, address, op, id), (err: unknown) => {
            assert.ok(err instanceof MailApiError, `${from} ${op}`);
            assert.equal(err.status, 403);
            assert.equal(err.code, 471, `${from} --${op}--> refused`);
            return true;
          });
          assert.equal(await statusOf(h, id), from, `${from} ${op}: unchanged`);
        }
      }
    }
  } finally {
    await h.close();
  }
});

Deno.test("cancel returns to the state before the request; a repeated cancel is a no-op", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const address = a.addressIds[0];
    for (const action of ["shred", "discard"] as const) {
      const id = await itemIn(h, a, "opened");
      await a.client[action](address, id);
      assert.equal(await statusOf(h, id), `${action}_requested`);
      const cancel = action === "shred" ? "cancelShred" : "cancelDiscard";
      await a.client[cancel](address, id);
      assert.equal(await statusOf(h, id), "opened");
      const n = (await h.ops.getItem(id)).status_history.length;
      await a.client[cancel](address, id); // repeat: holds already
      assert.equal((await h.ops.getItem(id)).status_history.length, n);
      // a cancel with nothing pending and no earlier cancel is refused
      await assert.rejects(
        a.client.cancelOpen(address, id),
        (e) => (e as MailApiError).code === 471,
      );
    }
  } finally {
    await h.close();
  }
});

Deno.test("the mailroom completes each pending request, fails them back, and refuses others", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const done: [ItemStatus, ItemStatus][] = [
      ["open_requested", "opened"],
      ["rescan_requested", "opened"],
      ["shred_requested", "shredded"],
      ["discard_requested", "discarded"],
    ];
    for (const [pending, final] of done) {
      const id = await itemIn(h, a, pending);
      await h.ops.completeRequest(id, { scan: new Blob([PDF]), page_count: 3 });
      const item = await h.ops.getItem(id);
      assert.equal(item.current_status, final);
      assert.equal(item.status_history.at(-1)?.source, "mailroom");
    }
    // open and rescan need the scan
    const needsScan = await itemIn(h, a, "open_requested");
    await assert.rejects(h.ops.completeRequest(needsScan), (e) => (e as MailApiError).code === 19);
    assert.equal(await statusOf(h, needsScan), "open_requested");
    // fail: back to the state before
    const failing = await itemIn(h, a, "rescan_requested");
    await h.ops.failRequest(failing, "scanner jammed");
    const failed = await h.ops.getItem(failing);
    assert.equal(failed.current_status, "opened");
    assert.match(failed.status_history.at(-1)?.note ?? "", /rescan failed: scanner jammed/);
    // nothing pending: 471 for complete and fail
    for (const s of ["received", "opened", "shredded", "discarded"] as ItemStatus[]) {
      const id = await itemIn(h, a, s);
      await assert.rejects(h.ops.completeRequest(id), (e) => (e as MailApiError).code === 471);
      await assert.rejects(h.ops.failRequest(id, "x"), (e) => (e as MailApiError).code === 471);
    }
    await assert.rejects(h.ops.completeRequest("999999"), (e) => (e as MailApiError).code === 14);
  } finally {
    await h.close();
  }
});
