/** Signing up again: concurrent signups, resends, and a later signup of a pending address. */
import assert from "node:assert/strict";
import { login, OTP_RESEND_SECONDS, resendOtp, signup, verifyOtp } from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { codeIn, ITER, newEmail, outbox, PASSWORD, SECRET } from "../_helpers.ts";

export const signupAgainCases: Case[] = [
  {
    name:
      "50 concurrent signups of one address: one user, one code; only the latest signup verifies",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail("race");
      const now = Date.now();
      const results = await Promise.all(
        Array.from(
          { length: 50 },
          () =>
            signup(db, {
              email,
              password: PASSWORD,
              secret: SECRET,
              sendEmail: box.send,
              iterations: ITER,
              now,
            }),
        ),
      );
      assert.ok(results.every((r) => r.ok), JSON.stringify(results.find((r) => !r.ok)));
      const attempts = results.map((r) => r.ok ? r.attempt : "");
      assert.equal(new Set(attempts).size, 50, "every signup is its own attempt");
      const count = await db.prepare("SELECT COUNT(*) AS n FROM users WHERE email = ?").bind(email)
        .first<{ n: number }>();
      assert.equal(count?.n, 1);
      assert.equal(box.mails.length, 1);
      // After the throttle, exactly one attempt (the pending signup's) gets a new code.
      const later = now + OTP_RESEND_SECONDS * 1000;
      const current: string[] = [];
      for (const attempt of attempts) {
        const before = box.mails.length;
        const r = await resendOtp(db, {
          email,
          attempt,
          secret: SECRET,
          sendEmail: box.send,
          now: later,
        });
        assert.deepEqual(r, { ok: true });
        if (box.mails.length > before) current.push(attempt);
      }
      assert.equal(current.length, 1);
      const code = codeIn(box.mails[1]);
      // That code with any other signup's attempt is refused (each refusal uses one of 5 tries).
      for (const attempt of attempts.filter((a) => a !== current[0]).slice(0, 4)) {
        assert.deepEqual(
          await verifyOtp(db, { email, code, attempt, secret: SECRET, now: later }),
          {
            ok: false,
            error: "invalid_code",
          },
        );
      }
      const v = await verifyOtp(db, {
        email,
        code,
        attempt: current[0],
        secret: SECRET,
        now: later,
      });
      assert.equal(v.ok, true);
    },
  },
  {
    name: "resends are throttled; a new code replaces the old; resendOtp answers ok",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail();
      const now = Date.now();
      const s = await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
        now,
      });
      assert.ok(s.ok);
      const { attempt } = s;
      const resend = (at: number, a = attempt, to = email) =>
        resendOtp(db, { email: to, attempt: a, secret: SECRET, sendEmail: box.send, now: at });
      assert.deepEqual(await resend(now + 2000), { ok: true });
      assert.equal(box.mails.length, 1);
      const later = now + OTP_RESEND_SECONDS * 1000;
      assert.deepEqual(await resend(later), { ok: true });
      assert.equal(box.mails.length, 2);
      const [first, second] = box.mails.map(codeIn);
      if (first !== second) {
        assert.deepEqual(
          await verifyOtp(db, { email, code: first, attempt, secret: SECRET, now: later }),
          { ok: false, error: "invalid_code" },
        );
      }
      assert.equal(
        (await verifyOtp(db, { email, code: second, attempt, secret: SECRET, now: later })).ok,
        true,
      );
      // Unknown addresses, verified ones, other attempts: the same answer, nothing sent.
      assert.deepEqual(await resend(later * 2, attempt, newEmail()), { ok: true });
      assert.deepEqual(await resend(later * 2), { ok: true });
      assert.deepEqual(await resend(later * 2, "A".repeat(43)), { ok: true });
      assert.equal(box.mails.length, 2);
      assert.deepEqual(await resendOtp(db, null as never), { ok: false, error: "invalid_input" });
      assert.deepEqual(
        await resendOtp(db, { email, secret: SECRET, sendEmail: box.send } as never),
        { ok: false, error: "invalid_input" },
      );
    },
  },
  {
    name: "signing up again while unverified: the latest signup's code sets its password",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail();
      const now = Date.now();
      const base = { email, secret: SECRET, sendEmail: box.send, iterations: ITER };
      const one = await signup(db, { ...base, password: "first long passphrase", now });
      const later = now + OTP_RESEND_SECONDS * 1000;
      const two = await signup(db, { ...base, password: "second long passphrase", now: later });
      assert.ok(one.ok && two.ok);
      assert.equal(box.mails.length, 2);
      const [c1, c2] = box.mails.map(codeIn);
      const verify = (code: string, attempt: string) =>
        verifyOtp(db, { email, code, attempt, secret: SECRET, now: later });
      // The first signup was replaced: its code and its attempt confirm nothing.
      assert.deepEqual(await verify(c1, one.attempt), { ok: false, error: "invalid_code" });
      assert.deepEqual(await verify(c2, one.attempt), { ok: false, error: "invalid_code" });
      if (c1 !== c2) {
        assert.deepEqual(await verify(c1, two.attempt), { ok: false, error: "invalid_code" });
      }
      assert.equal((await verify(c2, two.attempt)).ok, true);
      assert.equal(
        (await login(db, { email, password: "second long passphrase", iterations: ITER })).ok,
        true,
      );
      assert.equal(
        (await login(db, { email, password: "first long passphrase", iterations: ITER })).ok,
        false,
      );
    },
  },
];
