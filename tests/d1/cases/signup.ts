import assert from "node:assert/strict";
import { login, OTP_TTL_MINUTES, type SendFailure, signup, verifyOtp } from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { pendingUser } from "./_user.ts";
import {
  brokenDb,
  codeIn,
  failingSender,
  ITER,
  newEmail,
  outbox,
  PASSWORD,
  SECRET,
} from "../_helpers.ts";

export const signupCases: Case[] = [
  {
    name: "signup e-mails a code; verifyOtp verifies; login works (default iterations)",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail();
      const s = await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
      });
      assert.ok(s.ok);
      assert.match(s.attempt, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(box.mails.length, 1);
      assert.equal(box.mails[0].to, email);
      const code = codeIn(box.mails[0]);
      assert.match(code, /^\d{6}$/);
      assert.match(box.mails[0].text, new RegExp(`${OTP_TTL_MINUTES} minutes`));
      const before = await login(db, { email, password: PASSWORD });
      assert.deepEqual(before, { ok: false, error: "email_not_verified" });
      const v = await verifyOtp(db, { email, code, attempt: s.attempt, secret: SECRET });
      assert.equal(v.ok, true);
      const l = await login(db, { email, password: PASSWORD });
      assert.deepEqual(l, { ok: true, userId: v.ok ? v.userId : "" });
    },
  },
  {
    name: "signup normalizes the address and stores no code in clear",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail();
      const r = await signup(db, {
        email: `  ${email.toUpperCase()} `,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
      });
      assert.equal(r.ok, true);
      assert.equal(box.mails[0].to, email);
      const code = codeIn(box.mails[0]);
      const row = await db.prepare("SELECT * FROM otp_codes WHERE email = ?").bind(email).first<
        Record<string, unknown>
      >();
      assert.ok(row);
      assert.ok(!JSON.stringify(row).includes(code));
      assert.match(String(row.code_hash), /^[0-9a-f]{64}$/);
    },
  },
  {
    name: "signup with a verified address answers the same and e-mails a notice, no code",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail();
      const first = await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
      });
      assert.ok(first.ok);
      const attempt = first.attempt;
      await verifyOtp(db, { email, code: codeIn(box.mails[0]), attempt, secret: SECRET });
      const again = await signup(db, {
        email,
        password: "another long passphrase",
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
        appName: "Acme",
      });
      // The same shape as a new signup's answer; its attempt verifies nothing.
      assert.ok(again.ok);
      assert.match(again.attempt, /^[A-Za-z0-9_-]{43}$/);
      assert.notEqual(again.attempt, attempt);
      assert.equal(box.mails.length, 2);
      assert.match(box.mails[1].subject, /already|tried to sign up/);
      assert.doesNotMatch(box.mails[1].text, /\b\d{6}\b/);
      // The old password still works; the new one was not set.
      assert.equal((await login(db, { email, password: PASSWORD, iterations: ITER })).ok, true);
      assert.deepEqual(
        await login(db, { email, password: "another long passphrase", iterations: ITER }),
        { ok: false, error: "invalid_credentials" },
      );
      // The notice is throttled like codes.
      await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
      });
      assert.equal(box.mails.length, 2);
    },
  },
  {
    name: "the sixth wrong try fails even with the right code",
    async fn({ db }) {
      const { email, code, attempt } = await pendingUser(db);
      const wrong = code === "000000" ? "111111" : "000000";
      for (let i = 0; i < 5; i++) {
        assert.deepEqual(await verifyOtp(db, { email, code: wrong, attempt, secret: SECRET }), {
          ok: false,
          error: "invalid_code",
        });
      }
      assert.deepEqual(await verifyOtp(db, { email, code, attempt, secret: SECRET }), {
        ok: false,
        error: "too_many_attempts",
      });
    },
  },
  {
    name: "the right code on the fifth try works; a code works once",
    async fn({ db }) {
      const { email, code, attempt } = await pendingUser(db);
      const wrong = code === "000000" ? "111111" : "000000";
      for (let i = 0; i < 4; i++) {
        await verifyOtp(db, { email, code: wrong, attempt, secret: SECRET });
      }
      assert.equal(
        (await verifyOtp(db, {
          email,
          code: ` ${code.slice(0, 3)} ${code.slice(3)} `,
          attempt,
          secret: SECRET,
        })).ok,
        true,
      );
      assert.deepEqual(await verifyOtp(db, { email, code, attempt, secret: SECRET }), {
        ok: false,
        error: "invalid_code",
      });
    },
  },
  {
    name: "concurrent wrong guesses never exceed five tries",
    async fn({ db }) {
      const { email, code, attempt } = await pendingUser(db);
      const guesses = Array.from(
        { length: 20 },
        (_, i) => String((Number(code) + 1 + i) % 1e6).padStart(6, "0"),
      );
      const results = await Promise.all(
        guesses.map((g) => verifyOtp(db, { email, code: g, attempt, secret: SECRET })),
      );
      assert.equal(results.filter((r) => !r.ok && r.error === "invalid_code").length, 5);
      assert.equal(results.filter((r) => !r.ok && r.error === "too_many_attempts").length, 15);
    },
  },
  {
    name: "codes expire; unknown addresses and malformed codes are invalid_code",
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
      const code = codeIn(box.mails[0]);
      const expired = now + OTP_TTL_MINUTES * 60_000;
      assert.deepEqual(
        await verifyOtp(db, { email, code, attempt, secret: SECRET, now: expired }),
        { ok: false, error: "expired_code" },
      );
      assert.deepEqual(await verifyOtp(db, { email: newEmail(), code, attempt, secret: SECRET }), {
        ok: false,
        error: "invalid_code",
      });
      assert.deepEqual(
        await verifyOtp(db, { email, code: "12ab56", attempt, secret: SECRET, now }),
        { ok: false, error: "invalid_code" },
      );
      // The right code under another secret does not verify.
      assert.deepEqual(await verifyOtp(db, { email, code, attempt, secret: "other secret", now }), {
        ok: false,
        error: "invalid_code",
      });
      assert.equal(
        (await verifyOtp(db, { email, code, attempt, secret: ["new secret", SECRET], now })).ok,
        true,
      );
    },
  },
  {
    name: "renderOtp replaces the built-in template",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail();
      await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
        appName: "Acme",
        renderOtp: ({ code, ttlMinutes }) => ({
          subject: `Custom ${code}`,
          html: `<b>${code}</b>`,
          text: `code ${code} for ${ttlMinutes}m`,
        }),
      });
      assert.match(box.mails[0].subject, /^Custom \d{6}$/);
      assert.match(box.mails[0].text, /^code \d{6} for 10m$/);
    },
  },
  {
    name: "signup error codes",
    async fn({ db, fresh }) {
      const box = outbox();
      const ok = {
        email: newEmail(),
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
      };
      const err = async (p: unknown, d = db) => {
        const r = await signup(d, p as never);
        assert.equal(r.ok, false);
        return r.ok ? "" : r.error;
      };
      assert.equal(await err(undefined), "invalid_input");
      assert.equal(await err({ ...ok, secret: "" }), "invalid_input");
      assert.equal(await err({ ...ok, sendEmail: "nope" }), "invalid_input");
      assert.equal(await err({ ...ok, password: 12345678 }), "invalid_input");
      assert.equal(await err({ ...ok, email: "not-an-email" }), "invalid_email");
      assert.equal(await err({ ...ok, email: `${"a".repeat(250)}@example.com` }), "invalid_email");
      assert.equal(await err({ ...ok, password: "short" }), "password_too_short");
      assert.equal(await err({ ...ok, password: "x".repeat(257) }), "password_too_long");
      assert.equal(await err({ ...ok, password: "password123" }), "password_common");
      assert.equal(await err({ ...ok, password: ok.email }), "password_common");
      // The e-mail goes on after the answer: a failing sender or template is reported.
      const failures: SendFailure[] = [];
      const later: Promise<unknown>[] = [];
      const hooks = {
        onSendError: (f: SendFailure) => void failures.push(f),
        waitUntil: (p: Promise<unknown>) => void later.push(p),
      };
      const badTemplate = () => {
        throw new Error("bad template");
      };
      for (const extra of [{ sendEmail: failingSender }, { renderOtp: badTemplate }]) {
        assert.equal((await signup(db, { ...ok, ...hooks, email: newEmail(), ...extra })).ok, true);
      }
      await Promise.all(later);
      assert.deepEqual(failures.map((f) => [f.flow, f.error]), [
        ["signup", "send_failed"],
        ["signup", "internal_error"],
      ]);
      assert.equal(await err({ ...ok, onSendError: "log" }), "invalid_input");
      assert.equal(await err({ ...ok, waitUntil: 5 }), "invalid_input");
      assert.equal(await err(ok, brokenDb), "db_error");
      assert.equal(await err(ok, await fresh()), "db_error");
      assert.equal(box.mails.length, 0);
    },
  },
  {
    name: "a failed send does not hold the throttle",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail();
      const base = { email, password: PASSWORD, secret: SECRET, iterations: ITER };
      const later: Promise<unknown>[] = [];
      const failures: SendFailure[] = [];
      const failed = await signup(db, {
        ...base,
        sendEmail: failingSender,
        waitUntil: (p) => void later.push(p),
        onSendError: (f) => void failures.push(f),
      });
      assert.equal(failed.ok, true);
      await Promise.all(later);
      assert.equal(failures.length, 1);
      assert.equal((failures[0].cause as Error).message, "smtp down");
      assert.equal((await signup(db, { ...base, sendEmail: box.send })).ok, true);
      assert.equal(box.mails.length, 1);
    },
  },
  {
    name: "verifyOtp error codes",
    async fn({ db, fresh }) {
      const e = async (p: unknown, d = db) => {
        const r = await verifyOtp(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      const attempt = "A".repeat(43);
      assert.equal(await e(null), "invalid_input");
      assert.equal(
        await e({ email: newEmail(), code: 123456, attempt, secret: SECRET }),
        "invalid_input",
      );
      assert.equal(await e({ email: newEmail(), code: "123456", attempt }), "invalid_input");
      assert.equal(await e({ email: newEmail(), code: "123456", secret: SECRET }), "invalid_input");
      assert.equal(
        await e({ email: "nope", code: "123456", attempt, secret: SECRET }),
        "invalid_email",
      );
      assert.equal(
        await e({ email: newEmail(), code: "123456", attempt, secret: SECRET }, brokenDb),
        "db_error",
      );
      assert.equal(
        await e({ email: newEmail(), code: "123456", attempt, secret: SECRET }, await fresh()),
        "db_error",
      );
    },
  },
];
