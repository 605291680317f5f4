/**
 * Signup does the same database work whether the address is new, taken by a verified account or
 * pending, throttled or not: the same statements through the real database binding (one batch:
 * one round trip, one transaction), each call writing a row, and the same Web Crypto calls —
 * counted, not timed. Before, a taken address ran other statements than a new one and wrote
 * one row where a new one wrote two in two transactions (a signup answered a taken address in
 * about half the time of a new one), and a throttled taken address wrote nothing at all.
 */
import assert from "node:assert/strict";
import { type EmailMessage, signup } from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { counting, cryptoCalls, ITER, newEmail, outbox, PASSWORD, SECRET } from "../_helpers.ts";
import { pendingUser, verifiedUser } from "./_user.ts";

const MINUTE = 61_000;

export const signupWorkCases: Case[] = [
  {
    name:
      "signup: the same statements, writes and crypto calls for a new, a taken, a pending and a throttled address",
    async fn({ db }) {
      const taken = await verifiedUser(db);
      const pending = await pendingUser(db);
      const again = newEmail("again");
      // Every mail is held until the end: the flow answers first, then the mail goes.
      const box = outbox();
      let open!: () => void;
      const gate = new Promise<void>((resolve) => open = resolve);
      const send = (m: EmailMessage) => gate.then(() => box.send(m));
      let clock = Date.now() + MINUTE;
      const run = async (email: string, now: number) => {
        const { db: seen, log, changes } = counting(db);
        const tasks: Promise<unknown>[] = [];
        let attempt = "";
        const calls = await cryptoCalls(async () => {
          const r = await signup(seen, {
            email,
            password: PASSWORD,
            secret: SECRET,
            sendEmail: send,
            iterations: ITER,
            now,
            waitUntil: (p) => void tasks.push(p),
          });
          assert.ok(r.ok, JSON.stringify(r));
          attempt = r.attempt;
        });
        return { log, changes, calls, tasks, attempt };
      };
      const warmUp = newEmail("warm-up");
      await run(warmUp, clock); // imports the token key once, as a live site has
      clock += MINUTE;
      const fresh = await run(again, clock); // a new address: the user and its code
      const known = await run(taken.email, clock); // taken: the notice
      const knownThrottled = await run(taken.email, clock + 1000); // taken, a notice just went
      const repeat = await run(again, clock + 1000); // pending, its code just went
      const later = await run(pending.email, clock); // pending, past the throttle: a new code
      const all = { fresh, known, knownThrottled, repeat, later };
      assert.ok(fresh.log.length >= 1, fresh.log.join("\n"));
      for (const [name, r] of Object.entries(all)) {
        assert.deepEqual(r.log, fresh.log, `${name}: the same statements as a new address`);
        assert.deepEqual(r.calls, fresh.calls, `${name}: the same crypto calls`);
        // every signup writes (and so commits) a row, mailed or throttled
        const wrote = r.changes.reduce((a, b) => a + b, 0);
        assert.ok(wrote >= 1, `${name} writes a row: ${JSON.stringify(r.changes)}`);
        assert.equal(r.attempt.length, fresh.attempt.length, name);
      }
      // Only the mails differ, handed to waitUntil and not awaited.
      assert.deepEqual(
        Object.values(all).map((r) => r.tasks.length),
        [1, 1, 0, 0, 1],
      );
      assert.equal(box.mails.length, 0, "the flows answered before the sends finished");
      open();
      await Promise.all(Object.values(all).flatMap((r) => r.tasks));
      const mails = box.mails.filter((m) => m.to !== warmUp);
      assert.deepEqual(mails.map((m) => m.to), [again, taken.email, pending.email]);
      assert.match(mails[0].text, /\b\d{6}\b/); // the new address's code
      assert.doesNotMatch(mails[1].text, /\b\d{6}\b/); // the owner's notice has none
      // The latest signup of a pending address wins: its password is the pending one.
      const row = await db.prepare(
        "SELECT password_hash FROM otp_codes WHERE email = ? AND purpose = 'signup'",
      ).bind(again).first<{ password_hash: string }>();
      assert.ok(row?.password_hash);
      const verifiedRows = await db.prepare(
        "SELECT count(*) AS n FROM otp_codes WHERE email = ? AND purpose = 'signup'",
      ).bind(taken.email).first<{ n: number }>();
      assert.equal(Number(verifiedRows?.n), 0, "a verified account gets no pending password");
    },
  },
];
