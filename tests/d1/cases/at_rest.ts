import assert from "node:assert/strict";
import {
  applySchema,
  requestEmailChange,
  requestPasswordReset,
  resendOtp,
  signup,
  verifyOtp,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { codeIn, ITER, newEmail, outbox, PASSWORD, SECRET, tokenIn } from "../_helpers.ts";
import { assertNoneInClear, storedValues } from "../_at_rest.ts";

const APP = "https://example.com";

/** A token and its signature part: either would let its holder use the link. */
const tokenParts = (token: string) => [token, token.slice(token.lastIndexOf(".") + 1)];

export const atRestCases: Case[] = [
  {
    name: "at rest: codes, attempts, reset and e-mail-change links are stored only as HMACs",
    async fn({ fresh }) {
      const db = await fresh();
      await applySchema(db);
      const secrets: string[] = [];
      // A verified user, then a pending signup with a resent code.
      const box = outbox();
      const email = newEmail("rest");
      const s = await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
      });
      assert.ok(s.ok);
      secrets.push(s.attempt, codeIn(box.mails[0]));
      const v = await verifyOtp(db, {
        email,
        code: codeIn(box.mails[0]),
        attempt: s.attempt,
        secret: SECRET,
      });
      assert.ok(v.ok);
      const pending = newEmail("rest-pending");
      const p = await signup(db, {
        email: pending,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
        now: Date.now() - 120_000,
      });
      assert.ok(p.ok);
      secrets.push(p.attempt, codeIn(box.to(pending)[0]));
      await resendOtp(db, {
        email: pending,
        attempt: p.attempt,
        secret: SECRET,
        sendEmail: box.send,
      });
      assert.equal(box.to(pending).length, 2);
      secrets.push(codeIn(box.to(pending)[1]));
      // Links: a reset and an e-mail change, both still unused.
      await requestPasswordReset(db, { email, secret: SECRET, sendEmail: box.send, appUrl: APP });
      secrets.push(...tokenParts(tokenIn(box.to(email).at(-1))));
      const next = newEmail("rest-next");
      const c = await requestEmailChange(db, {
        userId: v.userId,
        newEmail: next,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
      });
      assert.deepEqual(c, { ok: true });
      secrets.push(...tokenParts(tokenIn(box.to(next)[0])));
      // The tables hold the pending code's row and the throttles: none of it in clear.
      const tables = new Set((await storedValues(db)).map((r) => r.table));
      for (const t of ["users", "otp_codes", "auth_throttle"]) assert.ok(tables.has(t), t);
      await assertNoneInClear(db, secrets);
    },
  },
];
