/**
 * Model-based check of the lifecycle: random sequences of customer and mailroom operations on
 * one item through the real API agree with a small reference model at every step.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type { ItemStatus, MailApiError } from "../../mail.ts";
import { PDF, startMail } from "./_harness.ts";

type Action = "open" | "rescan" | "shred" | "discard";
type Op =
  | { kind: "request"; action: Action }
  | { kind: "cancel"; action: Action }
  | { kind: "complete" }
  | { kind: "fail" };

const SHAPE: Record<Action, { from: ItemStatus[]; pending: ItemStatus; done: ItemStatus }> = {
  open: { from: ["received"], pending: "open_requested", done: "opened" },
  rescan: { from: ["opened"], pending: "rescan_requested", done: "opened" },
  shred: { from: ["received", "opened"], pending: "shred_requested", done: "shredded" },
  discard: { from: ["received", "opened"], pending: "discard_requested", done: "discarded" },
};

interface Model {
  status: ItemStatus;
  before: ItemStatus | null;
  cancelled: Action | null;
}

/** The reference: the next model state, or null when the API must answer 471. */
function step(m: Model, op: Op): Model | null {
  const pending = (Object.keys(SHAPE) as Action[]).find((a) => SHAPE[a].pending === m.status);
  switch (op.kind) {
    case "request": {
      const s = SHAPE[op.action];
      if (m.status === s.pending) return m;
      if (!s.from.includes(m.status)) return null;
      return { status: s.pending, before: m.status, cancelled: null };
    }
    case "cancel":
      if (m.status === SHAPE[op.action].pending) {
        return { status: m.before!, before: null, cancelled: op.action };
      }
      return m.cancelled === op.action ? m : null;
    case "complete":
      return pending ? { status: SHAPE[pending].done, before: null, cancelled: null } : null;
    case "fail":
      return pending ? { status: m.before!, before: null, cancelled: null } : null;
  }
}

const actions: Action[] = ["open", "rescan", "shred", "discard"];
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constantFrom(...actions).map((action): Op => ({ kind: "request", action })),
  fc.constantFrom(...actions).map((action): Op => ({ kind: "cancel", action })),
  fc.constantFrom<Op>({ kind: "complete" }, { kind: "fail" }),
);

Deno.test("lifecycle: random operation sequences match the reference model", async () => {
  const h = await startMail();
  try {
    const a = await h.account();
    const addr = a.addressIds[0];
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 12 }), async (ops) => {
        const id = await h.receive(addr);
        let model: Model = { status: "received", before: null, cancelled: null };
        for (const op of ops) {
          const want = step(model, op);
          const run = (): Promise<unknown> => {
            if (op.kind === "complete") {
              return h.ops.completeRequest(id, { scan: new Blob([PDF]), page_count: 1 });
            }
            if (op.kind === "fail") return h.ops.failRequest(id, "test");
            const c = a.client;
            const calls = op.kind === "request"
              ? { open: c.open, rescan: c.rescan, shred: c.shred, discard: c.discard }
              : {
                open: c.cancelOpen,
                rescan: c.cancelRescan,
                shred: c.cancelShred,
                discard: c.cancelDiscard,
              };
            return calls[op.action].call(c, addr, id);
          };
          if (want) {
            await run();
            model = want;
          } else {
            await assert.rejects(run(), (e) => (e as MailApiError).code === 471);
          }
          assert.equal((await h.ops.getItem(id)).current_status, model.status);
        }
      }),
      { numRuns: 30 },
    );
  } finally {
    await h.close();
  }
});
