/**
 * Revocable sessions: a cookie issued before a password change, a reset, an e-mail change or
 * "sign out everywhere" stops verifying, even when the core remembers it as verified.
 */
import assert from "node:assert/strict";
import {
  changePassword,
  confirmEmailChange,
  createUserSession,
  type D1Database,
  findOrCreateOAuthUser,
  readUserSession,
  removeUser,
  requestEmailChange,
  requestPasswordReset,
  resetPassword,
  signOutEverywhere,
} from "../../../d1.ts";
import { readSession } from "../../../mod.ts";
import type { Case } from "../_backend.ts";
import { brokenDb, ITER, newEmail, outbox, PASSWORD, SECRET, tokenIn } from "../_helpers.ts";
import { pendingUser, verifiedUser } from "./_user.ts";

const SESSION = { secret: "session secret of the tests", cookieName: "__Host-s" };
const APP = "https://example.com";

async function cookieFor(db: D1Database, userId: string): Promise<string> {
  const r = await createUserSession(db, { session: SESSION, userId });
  if (!r.ok) throw new Error(`createUserSession: ${r.error}`);
  assert.match(r.setCookie, /^__Host-s=[\w.-]+; HttpOnly; Secure; SameSite=Lax; Path=\/; /);
  return r.setCookie.split(";")[0];
}

const request = (cookie: string) => new Request(APP, { headers: { cookie } });

async function who(db: D1Database, cookie: string): Promise<string | null> {
  const me = await readUserSession(db, { session: SESSION, request: request(cookie) });
  return me ? me.user.id : null;
}

export const sessionCases: Case[] = [
  {
    name:
      "sessions: a password change, a reset, an e-mail change and sign-out-everywhere end older cookies",
    async fn({ db }) {
      const u = await verifiedUser(db);
      let cookie = await cookieFor(db, u.id);
      const other = await cookieFor(db, u.id); // the same user on another device
      for (let i = 0; i < 3; i++) assert.equal(await who(db, cookie), u.id);
      const me = await readUserSession(db, { session: SESSION, request: request(cookie) });
      assert.equal(me?.user.email, u.email);
      assert.equal(typeof me?.session.issuedAt, "number");

      const changed = await changePassword(db, {
        userId: u.id,
        currentPassword: PASSWORD,
        newPassword: "second passphrase here",
        iterations: ITER,
      });
      assert.equal(changed.ok, true);
      assert.equal(await who(db, cookie), null, "after a password change");
      assert.equal(await who(db, other), null, "on every device");
      cookie = await cookieFor(db, u.id);
      assert.equal(await who(db, cookie), u.id);

      const box = outbox();
      await requestPasswordReset(db, {
        email: u.email,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
      });
      const reset = await resetPassword(db, {
        token: tokenIn(box.mails[0]),
        newPassword: "third passphrase here",
        secret: SECRET,
        iterations: ITER,
      });
      assert.equal(reset.ok, true);
      assert.equal(await who(db, cookie), null, "after a reset");
      cookie = await cookieFor(db, u.id);

      const next = newEmail("moved");
      await requestEmailChange(db, {
        userId: u.id,
        newEmail: next,
        password: "third passphrase here",
        iterations: ITER,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
      });
      const moved = await confirmEmailChange(db, { token: tokenIn(box.mails[1]), secret: SECRET });
      assert.equal(moved.ok, true);
      assert.equal(await who(db, cookie), null, "after an e-mail change");
      cookie = await cookieFor(db, u.id);

      assert.deepEqual(await signOutEverywhere(db, { userId: u.id }), { ok: true });
      assert.equal(await who(db, cookie), null, "after sign out everywhere");
      // The cookie still verifies for the core alone (no database): the stamp is what ends it.
      assert.equal((await readSession(SESSION, request(cookie)))?.subject, u.id);
      const again = await cookieFor(db, u.id);
      assert.equal(await who(db, again), u.id);
    },
  },
  {
    name:
      "sessions: removed, unverified and OAuth users; error codes; readUserSession never throws",
    async fn({ db, fresh }) {
      const u = await verifiedUser(db);
      const cookie = await cookieFor(db, u.id);
      const removed = await removeUser(db, {
        userId: u.id,
        password: PASSWORD,
        sendEmail: () => {},
      });
      assert.equal(removed.ok, true);
      assert.equal(await who(db, cookie), null, "after the account is removed");

      const pending = await pendingUser(db);
      const row = await db.prepare("SELECT id FROM users WHERE email = ?").bind(pending.email)
        .first<{ id: string }>();
      assert.deepEqual(await createUserSession(db, { session: SESSION, userId: row!.id }), {
        ok: false,
        error: "email_not_verified",
      });

      const o = await findOrCreateOAuthUser(db, {
        provider: "github",
        providerUserId: `gh-${pending.email}`,
        email: pending.email,
        emailVerified: true,
      });
      assert.ok(o.ok);
      assert.equal(await who(db, await cookieFor(db, o.userId)), o.userId);

      const e = async (p: unknown, d: D1Database = db) => {
        const r = await createUserSession(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(await e(null), "invalid_input");
      assert.equal(await e({ session: SESSION, userId: 7 }), "invalid_input");
      assert.equal(await e({ session: SESSION, userId: "nobody" }), "not_found");
      assert.equal(
        await e({ session: { ...SESSION, cookieName: "a b" }, userId: o.userId }),
        "invalid_input",
      );
      assert.equal(
        await e({ session: { ...SESSION, secret: "" }, userId: o.userId }),
        "invalid_input",
      );
      assert.equal(await e({ session: SESSION, userId: o.userId }, brokenDb), "db_error");
      assert.equal(await e({ session: SESSION, userId: o.userId }, await fresh()), "db_error");

      const good = await cookieFor(db, o.userId);
      for (
        const [d, p] of [
          [brokenDb, { session: SESSION, request: request(good) }],
          [await fresh(), { session: SESSION, request: request(good) }],
          [db, null],
          [db, { session: SESSION }],
          [db, { session: null, request: request(good) }],
          [db, { session: SESSION, request: { headers: null } }],
        ] as const
      ) {
        assert.equal(await readUserSession(d as D1Database, p as never), null);
      }
      assert.deepEqual(await signOutEverywhere(db, { userId: "nobody" }), {
        ok: false,
        error: "not_found",
      });
      assert.deepEqual(await signOutEverywhere(db, null as never), {
        ok: false,
        error: "invalid_input",
      });
      assert.deepEqual(await signOutEverywhere(brokenDb, { userId: o.userId }), {
        ok: false,
        error: "db_error",
      });
    },
  },
];
