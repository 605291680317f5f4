import assert from "node:assert/strict";
import {
  changeName,
  changePassword,
  changeUsername,
  findOrCreateOAuthUser,
  getUser,
  login,
  removeUser,
  requestPasswordReset,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { brokenDb, failingSender, ITER, outbox, PASSWORD, SECRET } from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

export const accountCases: Case[] = [
  {
    name: "changePassword: success and error codes",
    async fn({ db, fresh }) {
      const u = await verifiedUser(db);
      const base = { userId: u.id, currentPassword: PASSWORD, iterations: ITER };
      const e = async (p: unknown, d = db) => {
        const r = await changePassword(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(
        await e({ ...base, currentPassword: "wrong password!", newPassword: "a new passphrase" }),
        "wrong_password",
      );
      assert.equal(
        await e({ ...base, userId: "nobody", newPassword: "a new passphrase" }),
        "not_found",
      );
      assert.equal(await e({ ...base, newPassword: "short" }), "password_too_short");
      assert.equal(await e({ ...base, newPassword: "x".repeat(300) }), "password_too_long");
      assert.equal(await e({ ...base, newPassword: "iloveyou" }), "password_common");
      assert.equal(await e({ ...base, newPassword: ["a"] }), "invalid_input");
      assert.equal(await e({ ...base, newPassword: "a new passphrase" }, brokenDb), "db_error");
      assert.equal(
        await e({ ...base, newPassword: "a new passphrase" }, await fresh()),
        "db_error",
      );
      assert.equal(await e({ ...base, newPassword: "a new passphrase" }), "ok");
      assert.equal(
        (await login(db, { email: u.email, password: "a new passphrase", iterations: ITER })).ok,
        true,
      );
      assert.equal(
        (await login(db, { email: u.email, password: PASSWORD, iterations: ITER })).ok,
        false,
      );
    },
  },
  {
    name: "changeName / changeUsername: set, clear, error codes; getUser reads it",
    async fn({ db, fresh }) {
      const u = await verifiedUser(db);
      assert.deepEqual(await changeName(db, { userId: u.id, name: "  Ada Lovelace " }), {
        ok: true,
        name: "Ada Lovelace",
      });
      const g = await getUser(db, u.id);
      assert.ok(g.ok);
      assert.equal(g.user.name, "Ada Lovelace");
      assert.equal(g.user.email, u.email);
      assert.equal(g.user.isAdmin, false);
      assert.equal(g.user.emailVerified, true);
      assert.equal(g.user.hasPassword, true);
      assert.deepEqual(await changeUsername(db, { userId: u.id, name: null }), {
        ok: true,
        name: null,
      });
      const e = async (p: unknown, d = db) => {
        const r = await changeName(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(await e({ userId: u.id, name: "" }), "invalid_name");
      assert.equal(await e({ userId: u.id, name: "a\nb" }), "invalid_name");
      assert.equal(await e({ userId: u.id, name: "x".repeat(101) }), "invalid_name");
      assert.equal(await e({ userId: u.id, name: 7 }), "invalid_name");
      assert.equal(await e({ userId: "nobody", name: "Ada" }), "not_found");
      assert.equal(await e({ userId: 1, name: "Ada" }), "invalid_input");
      assert.equal(await e({ userId: u.id, name: "Ada" }, brokenDb), "db_error");
      assert.equal(await e({ userId: u.id, name: "Ada" }, await fresh()), "db_error");
      assert.deepEqual(await getUser(db, "nobody"), { ok: false, error: "not_found" });
      assert.deepEqual(await getUser(db, 5 as never), { ok: false, error: "invalid_input" });
      assert.deepEqual(await getUser(brokenDb, u.id), { ok: false, error: "db_error" });
    },
  },
  {
    name: "removeUser with the password: deletes user, identities and codes; e-mails the notice",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const link = await findOrCreateOAuthUser(db, {
        provider: "github",
        providerUserId: 99,
        email: u.email,
        emailVerified: true,
      });
      assert.deepEqual(link, { ok: true, userId: u.id, created: false });
      await requestPasswordReset(db, {
        email: u.email,
        secret: SECRET,
        sendEmail: () => {},
        appUrl: "https://e.com",
      });
      const box = outbox();
      const r = await removeUser(db, {
        userId: u.id,
        password: PASSWORD,
        sendEmail: box.send,
        appName: "Acme <Shop>",
      });
      assert.deepEqual(r, { ok: true, notified: true });
      assert.equal(box.mails.length, 1);
      assert.equal(box.mails[0].to, u.email);
      assert.match(box.mails[0].subject, /deleted/);
      assert.match(box.mails[0].html, /Acme &#60;Shop&#62;/);
      for (
        const [table, col, v] of [["users", "id", u.id], ["oauth_identities", "user_id", u.id], [
          "otp_codes",
          "email",
          u.email,
        ]]
      ) {
        const n = await db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${col} = ?`).bind(v)
          .first<{ n: number }>();
        assert.equal(n?.n, 0, table);
      }
      assert.equal(
        (await login(db, { email: u.email, password: PASSWORD, iterations: ITER })).ok,
        false,
      );
    },
  },
  {
    name: "removeUser with a fresh session; stale or missing proof is reauth_required",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const now = Date.now();
      const nowS = Math.floor(now / 1000);
      const e = async (p: unknown, d = db) => {
        const r = await removeUser(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      const base = { userId: u.id, sendEmail: () => {}, now };
      assert.equal(await e({ ...base }), "reauth_required");
      assert.equal(await e({ ...base, session: { issuedAt: nowS - 301 } }), "reauth_required");
      assert.equal(
        await e({ ...base, session: { issuedAt: nowS - 100 }, maxSessionAgeSeconds: 60 }),
        "reauth_required",
      );
      assert.equal(await e({ ...base, session: { issuedAt: nowS + 3600 } }), "reauth_required");
      assert.equal(
        await e({ ...base, password: "wrong password!", iterations: ITER }),
        "wrong_password",
      );
      assert.equal(await e({ ...base, password: 5 }), "invalid_input");
      assert.equal(await e({ ...base, sendEmail: undefined, password: PASSWORD }), "invalid_input");
      assert.equal(await e({ ...base, userId: "nobody", password: PASSWORD }), "not_found");
      assert.equal(await e({ ...base, password: PASSWORD }, brokenDb), "db_error");
      assert.deepEqual(
        await removeUser(db, {
          ...base,
          session: { issuedAt: nowS - 30 },
          sendEmail: failingSender,
        }),
        { ok: true, notified: false },
      );
      assert.equal(await e({ ...base, password: PASSWORD }), "not_found");
    },
  },
];
