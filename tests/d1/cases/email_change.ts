import assert from "node:assert/strict";
import {
  confirmEmailChange,
  login,
  requestEmailChange,
  requestPasswordReset,
  resetPassword,
  type SendFailure,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import {
  brokenDb,
  failingSender,
  ITER,
  newEmail,
  outbox,
  PASSWORD,
  SECRET,
  tokenIn,
} from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

const APP = "https://example.com";

export const emailChangeCases: Case[] = [
  {
    name: "e-mail change: link to the new address, switch on confirm, notice to the old",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const resetBox = outbox();
      await requestPasswordReset(db, {
        email: u.email,
        secret: SECRET,
        sendEmail: resetBox.send,
        appUrl: APP,
      });
      const box = outbox();
      const next = newEmail("new");
      const r = await requestEmailChange(db, {
        userId: u.id,
        newEmail: next.toUpperCase(),
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
      });
      assert.deepEqual(r, { ok: true });
      assert.equal(box.mails.length, 1);
      assert.equal(box.mails[0].to, next);
      assert.match(box.mails[0].text, /confirm-email\?token=/);
      assert.match(box.mails[0].text, /24 hours/);
      const token = tokenIn(box.mails[0]);
      const c = await confirmEmailChange(db, { token, secret: SECRET, sendEmail: box.send });
      assert.deepEqual(c, { ok: true, userId: u.id, email: next, notified: true });
      assert.equal(box.mails[1].to, u.email);
      assert.ok(box.mails[1].text.includes(next));
      assert.equal(
        (await login(db, { email: next, password: PASSWORD, iterations: ITER })).ok,
        true,
      );
      assert.equal(
        (await login(db, { email: u.email, password: PASSWORD, iterations: ITER })).ok,
        false,
      );
      assert.deepEqual(await confirmEmailChange(db, { token, secret: SECRET }), {
        ok: false,
        error: "invalid_token",
      });
      // A reset link issued before the change no longer works.
      assert.deepEqual(
        await resetPassword(db, {
          token: tokenIn(resetBox.mails[0]),
          newPassword: "some new passphrase",
          secret: SECRET,
        }),
        { ok: false, error: "invalid_token" },
      );
    },
  },
  {
    name: "e-mail change to a taken address: same answer, nothing sent; a lost race is email_taken",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const other = await verifiedUser(db);
      const box = outbox();
      const base = {
        userId: u.id,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
      };
      assert.deepEqual(await requestEmailChange(db, { ...base, newEmail: other.email }), {
        ok: true,
      });
      assert.equal(box.mails.length, 0);
      const target = newEmail("target");
      // A request for a taken address counts in the one-a-minute throttle like any other.
      await requestEmailChange(db, {
        ...base,
        now: Date.now() + 61_000,
        newEmail: target,
        renderEmailChange: ({ confirmUrl, newEmail, ttlHours }) => ({
          subject: "C",
          html: "",
          text: `${newEmail} ${ttlHours} ${confirmUrl}`,
        }),
      });
      assert.equal(box.mails.length, 1);
      assert.ok(box.mails[0].text.startsWith(`${target} 24 https://`));
      // Someone else takes the address before the confirmation.
      const third = await verifiedUser(db);
      const box2 = outbox();
      await requestEmailChange(db, {
        ...base,
        userId: third.id,
        newEmail: target,
        sendEmail: box2.send,
      });
      assert.equal(
        (await confirmEmailChange(db, { token: tokenIn(box2.mails[0]), secret: SECRET })).ok,
        true,
      );
      assert.deepEqual(
        await confirmEmailChange(db, { token: tokenIn(box.mails[0]), secret: SECRET }),
        {
          ok: false,
          error: "email_taken",
        },
      );
    },
  },
  {
    name: "requestEmailChange / confirmEmailChange error codes",
    async fn({ db, fresh }) {
      const u = await verifiedUser(db);
      const base = {
        userId: u.id,
        newEmail: newEmail(),
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        sendEmail: () => {},
        appUrl: APP,
      };
      const e = async (p: unknown, d = db) => {
        const r = await requestEmailChange(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(await e([]), "invalid_input");
      assert.equal(await e({ ...base, appUrl: "javascript:alert(1)" }), "invalid_input");
      assert.equal(await e({ ...base, newEmail: "a@b" }), "invalid_email");
      assert.equal(await e({ ...base, newEmail: u.email.toUpperCase() }), "same_email");
      assert.equal(await e({ ...base, userId: "nobody" }), "not_found");
      assert.equal(await e({ ...base, password: "wrong password!" }), "wrong_password");
      assert.equal(await e({ ...base, password: undefined }), "reauth_required");
      // The link goes on after the answer: a failing sender or template is reported.
      const failures: SendFailure[] = [];
      const later: Promise<unknown>[] = [];
      const hooks = {
        onSendError: (f: SendFailure) => void failures.push(f),
        waitUntil: (p: Promise<unknown>) => void later.push(p),
      };
      assert.equal(await e({ ...base, ...hooks, sendEmail: failingSender }), "ok");
      await Promise.all(later); // the failed send lifted the one-a-minute throttle
      assert.equal(await e({ ...base, ...hooks, renderEmailChange: () => null }), "ok");
      await Promise.all(later);
      assert.deepEqual(failures.map((f) => [f.flow, f.error]), [
        ["requestEmailChange", "send_failed"],
        ["requestEmailChange", "internal_error"],
      ]);
      assert.equal(await e(base, brokenDb), "db_error");
      assert.equal(await e(base, await fresh()), "db_error");
      assert.equal(
        await e({
          ...base,
          password: undefined,
          session: { issuedAt: Math.floor(Date.now() / 1000) },
        }),
        "ok",
      );
      const c = async (p: unknown, d = db) => {
        const r = await confirmEmailChange(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(await c(undefined), "invalid_input");
      assert.equal(await c({ token: "t", secret: SECRET, sendEmail: 1 }), "invalid_input");
      assert.equal(await c({ token: "t", secret: SECRET }), "invalid_token");
      assert.equal(await c({ token: "t", secret: SECRET }, brokenDb), "invalid_token");
      const box = outbox();
      await requestEmailChange(db, {
        ...base,
        newEmail: newEmail(),
        sendEmail: box.send,
        now: Date.now() + 3_600_000,
      });
      const token = tokenIn(box.mails[0]);
      assert.equal(await c({ token, secret: SECRET }, brokenDb), "db_error");
      assert.equal(await c({ token, secret: SECRET }, await fresh()), "db_error");
      assert.equal(await c({ token, secret: SECRET }), "ok");
    },
  },
];
