import assert from "node:assert/strict";
import {
  changePassword,
  checkResetToken,
  login,
  requestEmailChange,
  requestPasswordReset,
  resetPassword,
} from "../../../d1.ts";
import { signToken } from "../../../mod.ts";
import type { Case } from "../_backend.ts";
import { brokenDb, ITER, newEmail, outbox, PASSWORD, SECRET, tokenIn } from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

const APP = "https://example.com/users";

export const resetCases: Case[] = [
  {
    name: "reset: link e-mailed, password set, token works once",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const box = outbox();
      assert.deepEqual(
        await requestPasswordReset(db, {
          email: u.email,
          secret: SECRET,
          sendEmail: box.send,
          appUrl: APP + "/",
          resetPath: "/reset",
        }),
        { ok: true },
      );
      assert.equal(box.mails.length, 1);
      assert.match(box.mails[0].text, /https:\/\/example\.com\/users\/reset\?token=/);
      assert.match(box.mails[0].text, /1 hours/);
      const token = tokenIn(box.mails[0]);
      const r = await resetPassword(db, {
        token,
        newPassword: "a brand new passphrase",
        secret: SECRET,
        iterations: ITER,
      });
      assert.deepEqual(r, { ok: true, userId: u.id });
      assert.equal(
        (await login(db, { email: u.email, password: "a brand new passphrase", iterations: ITER }))
          .ok,
        true,
      );
      assert.equal(
        (await login(db, { email: u.email, password: PASSWORD, iterations: ITER })).ok,
        false,
      );
      assert.deepEqual(
        await resetPassword(db, {
          token,
          newPassword: "yet another passphrase",
          secret: SECRET,
          iterations: ITER,
        }),
        { ok: false, error: "invalid_token" },
      );
    },
  },
  {
    name: "reset: two concurrent uses of one token, one wins",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const box = outbox();
      await requestPasswordReset(db, {
        email: u.email,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
      });
      const token = tokenIn(box.mails[0]);
      const results = await Promise.all(
        ["first new passphrase", "second new passphrase"].map((newPassword) =>
          resetPassword(db, { token, newPassword, secret: SECRET, iterations: ITER })
        ),
      );
      assert.equal(results.filter((r) => r.ok).length, 1);
      assert.deepEqual(results.find((r) => !r.ok), { ok: false, error: "invalid_token" });
    },
  },
  {
    name: "reset: unknown addresses and garbage answer ok and send nothing; requests are throttled",
    async fn({ db }) {
      const box = outbox();
      const ok = { ok: true };
      assert.deepEqual(
        await requestPasswordReset(db, {
          email: newEmail(),
          secret: SECRET,
          sendEmail: box.send,
          appUrl: APP,
        }),
        ok,
      );
      assert.deepEqual(await requestPasswordReset(db, null as never), ok);
      assert.deepEqual(await requestPasswordReset(db, { email: 5 } as never), ok);
      assert.deepEqual(
        await requestPasswordReset(brokenDb, {
          email: newEmail(),
          secret: SECRET,
          sendEmail: box.send,
          appUrl: APP,
        }),
        ok,
      );
      const u = await verifiedUser(db);
      assert.deepEqual(
        await requestPasswordReset(db, {
          email: u.email,
          secret: SECRET,
          sendEmail: failingSend,
          appUrl: APP,
        }),
        ok,
      );
      assert.deepEqual(
        await requestPasswordReset(db, {
          email: u.email,
          secret: SECRET,
          sendEmail: box.send,
          appUrl: APP,
        }),
        ok,
      );
      assert.deepEqual(
        await requestPasswordReset(db, {
          email: u.email,
          secret: SECRET,
          sendEmail: box.send,
          appUrl: APP,
        }),
        ok,
      );
      assert.equal(box.mails.length, 1);
    },
  },
  {
    name:
      "reset: tokens issued before a password or e-mail change fail; expired and foreign tokens fail",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const box = outbox();
      const now = Date.now();
      await requestPasswordReset(db, {
        email: u.email,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
        now,
        renderReset: ({ resetUrl, ttlHours }) => ({
          subject: "R",
          html: "",
          text: `${resetUrl} ${ttlHours}`,
        }),
      });
      const token = tokenIn(box.mails[0]);
      assert.deepEqual(
        await resetPassword(db, {
          token,
          newPassword: "a brand new passphrase",
          secret: SECRET,
          now: now + 3600_000,
        }),
        { ok: false, error: "invalid_token" },
      );
      assert.deepEqual(
        await resetPassword(db, {
          token,
          newPassword: "a brand new passphrase",
          secret: "another secret",
        }),
        { ok: false, error: "invalid_token" },
      );
      const forged = await signToken(SECRET, {
        purpose: "gatehouse.email-change",
        payload: { u: u.id, s: "x" },
        ttlSeconds: 60,
      });
      assert.deepEqual(
        await resetPassword(db, {
          token: forged,
          newPassword: "a brand new passphrase",
          secret: SECRET,
        }),
        { ok: false, error: "invalid_token" },
      );
      assert.equal(
        (await changePassword(db, {
          userId: u.id,
          currentPassword: PASSWORD,
          newPassword: "changed passphrase",
          iterations: ITER,
        })).ok,
        true,
      );
      assert.deepEqual(
        await resetPassword(db, {
          token,
          newPassword: "a brand new passphrase",
          secret: SECRET,
          iterations: ITER,
        }),
        { ok: false, error: "invalid_token" },
      );
      // Same after an e-mail change request is confirmed: covered in the e-mail change cases.
      void requestEmailChange;
    },
  },
  {
    name: "resetPassword error codes",
    async fn({ db, fresh }) {
      const u = await verifiedUser(db);
      const box = outbox();
      await requestPasswordReset(db, {
        email: u.email,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
      });
      const token = tokenIn(box.mails[0]);
      const e = async (p: unknown, d = db) => {
        const r = await resetPassword(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(await e("token"), "invalid_input");
      assert.equal(await e({ token, newPassword: PASSWORD }), "invalid_input");
      assert.equal(
        await e({ token: null, newPassword: PASSWORD, secret: SECRET }),
        "invalid_input",
      );
      assert.equal(
        await e({ token: "x.y", newPassword: "another long passphrase", secret: SECRET }),
        "invalid_token",
      );
      assert.equal(await e({ token, newPassword: "short", secret: SECRET }), "password_too_short");
      assert.equal(
        await e({ token, newPassword: "é".repeat(257), secret: SECRET }),
        "password_too_long",
      );
      assert.equal(
        await e({ token, newPassword: "qwertyuiop", secret: SECRET }),
        "password_common",
      );
      assert.equal(await e({ token, newPassword: u.email, secret: SECRET }), "password_common");
      assert.equal(
        await e({ token, newPassword: "another long passphrase", secret: SECRET }, brokenDb),
        "db_error",
      );
      assert.equal(
        await e({ token, newPassword: "another long passphrase", secret: SECRET }, await fresh()),
        "db_error",
      );
      // The token survived the failed attempts.
      assert.equal(
        await e({
          token,
          newPassword: "another long passphrase",
          secret: SECRET,
          iterations: ITER,
        }),
        "ok",
      );
    },
  },
  {
    name:
      "reset: checkResetToken tells a live link from a used, expired, stale or forged one, and uses nothing",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const box = outbox();
      const now = Date.now();
      const ask = () =>
        requestPasswordReset(db, {
          email: u.email,
          secret: SECRET,
          sendEmail: box.send,
          appUrl: APP,
          now,
        });
      await ask();
      const token = tokenIn(box.mails[0]);
      const check = (t: string, o: { secret?: string; now?: number } = {}) =>
        checkResetToken(db, { token: t, secret: o.secret ?? SECRET, now: o.now });
      // Live: checking it (twice) does not use it up.
      assert.deepEqual(await check(token), { ok: true });
      assert.deepEqual(await check(token, { now: now + 3599_000 }), { ok: true });
      const dead = { ok: false, error: "invalid_token" };
      assert.deepEqual(await check(token, { now: now + 3600_000 }), dead, "expired");
      assert.deepEqual(await check(token, { secret: "another secret" }), dead, "foreign");
      assert.deepEqual(await check("x.y"), dead, "garbage");
      const forged = await signToken(SECRET, {
        purpose: "gatehouse.email-change",
        payload: { u: u.id, s: "x" },
        ttlSeconds: 60,
      });
      assert.deepEqual(await check(forged), dead, "another purpose");
      assert.deepEqual(await checkResetToken(db, { token } as never), {
        ok: false,
        error: "invalid_input",
      });
      assert.deepEqual(await checkResetToken(brokenDb, { token, secret: SECRET }), {
        ok: false,
        error: "db_error",
      });
      // Used: after the reset the same link is dead.
      const r = await resetPassword(db, {
        token,
        newPassword: "a brand new passphrase",
        secret: SECRET,
        iterations: ITER,
      });
      assert.ok(r.ok);
      assert.deepEqual(await check(token), dead, "used");
      // Stale: a link sent before a password change is dead too. (The reset proved the inbox,
      // so the one-link-a-minute slot started over.)
      await ask();
      const later = tokenIn(box.mails[box.mails.length - 1]);
      assert.notEqual(later, token);
      assert.deepEqual(await check(later), { ok: true });
      assert.ok(
        (await changePassword(db, {
          userId: u.id,
          currentPassword: "a brand new passphrase",
          newPassword: "changed passphrase",
          iterations: ITER,
        })).ok,
      );
      assert.deepEqual(await check(later), dead, "stale");
    },
  },
];

const failingSend = () => Promise.reject(new Error("down"));
