/**
 * Forgot-password does the same work whether or not the address has an account: the same
 * statements through the real database binding and the same Web Crypto calls, counted, not
 * timed. Sending the e-mail is handed to `waitUntil`.
 */
import assert from "node:assert/strict";
import { requestPasswordReset } from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { counting, cryptoCalls, newEmail, outbox, SECRET } from "../_helpers.ts";
import { pendingUser, verifiedUser } from "./_user.ts";

export const forgotWorkCases: Case[] = [
  {
    name:
      "forgot-password: the same statements and crypto calls for an account, a pending one, a throttled one and no account",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const pending = await pendingUser(db);
      // A mail sender that takes as long as the test wants: the flow must not wait for it.
      const box = outbox();
      let open!: () => void;
      const gate = new Promise<void>((resolve) => open = resolve);
      const slowSend = (m: Parameters<typeof box.send>[0]) => gate.then(() => box.send(m));
      const run = async (email: string) => {
        const { db: seen, log } = counting(db);
        const tasks: Promise<unknown>[] = [];
        const calls = await cryptoCalls(async () => {
          const r = await requestPasswordReset(seen, {
            email,
            secret: SECRET,
            sendEmail: slowSend,
            appUrl: "https://x.example",
            waitUntil: (p) => void tasks.push(p),
          });
          assert.deepEqual(r, { ok: true });
        });
        return { log, calls, tasks };
      };
      await run(newEmail("warm-up")); // imports the token key once, as a live site has
      const known = await run(u.email);
      const unknownEmail = newEmail("nobody");
      const unknown = await run(unknownEmail);
      const throttled = await run(u.email);
      const unverified = await run(pending.email);
      const garbage = await run("not an address");
      assert.ok(known.log.length >= 2, known.log.join("\n"));
      assert.equal(known.calls.sign, 1, JSON.stringify(known.calls)); // the link's token
      for (const other of [unknown, throttled, unverified, garbage]) {
        assert.deepEqual(other.log, known.log);
        assert.deepEqual(other.calls, known.calls);
      }
      // Only the sends differ, and they were handed to waitUntil, not awaited.
      assert.deepEqual(
        [known, unknown, throttled, unverified, garbage].map((r) => r.tasks.length),
        [1, 0, 0, 1, 0],
      );
      assert.equal(box.mails.length, 0, "the flows answered before the sends finished");
      open();
      await Promise.all([...known.tasks, ...unverified.tasks]);
      assert.deepEqual(box.mails.map((m) => m.to), [u.email, pending.email]);
      // The one write is the address's send slot, account or not (dropped after a day).
      const slots = await db.prepare(
        "SELECT account FROM auth_throttle WHERE kind = 'send' AND account IN (?, ?)",
      ).bind(u.email, unknownEmail).all<{ account: string }>();
      assert.deepEqual(slots.results.map((r) => r.account).sort(), [u.email, unknownEmail].sort());
    },
  },
  {
    name: "forgot-password: a failed send through waitUntil lifts the throttle",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const tasks: Promise<unknown>[] = [];
      const base = { email: u.email, secret: SECRET, appUrl: "https://x.example" };
      await requestPasswordReset(db, {
        ...base,
        sendEmail: () => Promise.reject(new Error("smtp down")),
        waitUntil: (p) => void tasks.push(p),
      });
      assert.equal(tasks.length, 1);
      await tasks[0];
      const box = outbox();
      await requestPasswordReset(db, { ...base, sendEmail: box.send });
      assert.equal(box.mails.length, 1);
    },
  },
];
