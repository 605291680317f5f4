import assert from "node:assert/strict";
import { login } from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { brokenDb, ITER, newEmail, PASSWORD } from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

export const loginCases: Case[] = [
  {
    name: "login: success, same answer for unknown e-mail and wrong password",
    async fn({ db }) {
      const u = await verifiedUser(db);
      assert.deepEqual(
        await login(db, { email: u.email.toUpperCase(), password: PASSWORD, iterations: ITER }),
        {
          ok: true,
          userId: u.id,
        },
      );
      const wrong = await login(db, {
        email: u.email,
        password: "not the password",
        iterations: ITER,
      });
      const unknown = await login(db, { email: newEmail(), password: PASSWORD, iterations: ITER });
      const garbage = await login(db, { email: "garbage", password: PASSWORD, iterations: ITER });
      assert.deepEqual(wrong, { ok: false, error: "invalid_credentials" });
      assert.deepEqual(unknown, wrong);
      assert.deepEqual(garbage, wrong);
    },
  },
  {
    name: "login upgrades hashes stored with fewer iterations",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const before = await db.prepare("SELECT password_hash FROM users WHERE id = ?").bind(u.id)
        .first<{ password_hash: string }>();
      assert.match(before!.password_hash, /i=1000,/);
      assert.equal(
        (await login(db, { email: u.email, password: PASSWORD, iterations: 2000 })).ok,
        true,
      );
      const after = await db.prepare("SELECT password_hash FROM users WHERE id = ?").bind(u.id)
        .first<{ password_hash: string }>();
      assert.match(after!.password_hash, /i=2000,/);
      assert.equal(
        (await login(db, { email: u.email, password: PASSWORD, iterations: 2000 })).ok,
        true,
      );
    },
  },
  {
    name: "login error codes",
    async fn({ db, fresh }) {
      const e = async (p: unknown, d = db) => {
        const r = await login(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(await e(42), "invalid_input");
      assert.equal(await e({ email: newEmail(), password: null }), "invalid_input");
      assert.equal(
        await e({ email: newEmail(), password: PASSWORD, iterations: -1 }),
        "invalid_input",
      );
      assert.equal(
        await e({ email: newEmail(), password: PASSWORD, iterations: ITER }, brokenDb),
        "db_error",
      );
      assert.equal(
        await e({ email: newEmail(), password: PASSWORD, iterations: ITER }, await fresh()),
        "db_error",
      );
    },
  },
];
