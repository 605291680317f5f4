import assert from "node:assert/strict";
import { findOrCreateOAuthUser, getUser, login, signup } from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { brokenDb, ITER, newEmail, outbox, PASSWORD, SECRET } from "../_helpers.ts";

export const oauthCases: Case[] = [
  {
    name: "OAuth: creates a verified user without password, then finds it by identity",
    async fn({ db }) {
      const email = newEmail("oauth");
      const a = await findOrCreateOAuthUser(db, {
        provider: "google",
        providerUserId: "g-1" + email,
        email,
        emailVerified: true,
      });
      assert.ok(a.ok && a.created);
      const b = await findOrCreateOAuthUser(db, {
        provider: "google",
        providerUserId: "g-1" + email,
        email: newEmail(),
        emailVerified: false,
      });
      assert.deepEqual(b, { ok: true, userId: a.userId, created: false });
      const g = await getUser(db, a.userId);
      assert.ok(g.ok && g.user.emailVerified && !g.user.hasPassword);
      // A second provider with the same verified address links to the same user.
      const c = await findOrCreateOAuthUser(db, {
        provider: "github",
        providerUserId: 12345,
        email,
        emailVerified: true,
      });
      assert.deepEqual(c, { ok: true, userId: a.userId, created: false });
      const n = await db.prepare("SELECT COUNT(*) AS n FROM oauth_identities WHERE user_id = ?")
        .bind(a.userId).first<{ n: number }>();
      assert.equal(n?.n, 2);
      assert.deepEqual(await login(db, { email, password: PASSWORD, iterations: ITER }), {
        ok: false,
        error: "invalid_credentials",
      });
    },
  },
  {
    name: "OAuth: linking to an unverified signup verifies it and drops the unproven password",
    async fn({ db }) {
      const email = newEmail();
      await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: outbox().send,
        iterations: ITER,
      });
      const r = await findOrCreateOAuthUser(db, {
        provider: "microsoft",
        providerUserId: "m" + email,
        email,
        emailVerified: true,
      });
      assert.ok(r.ok && !r.created);
      assert.deepEqual(await login(db, { email, password: PASSWORD, iterations: ITER }), {
        ok: false,
        error: "invalid_credentials",
      });
    },
  },
  {
    name: "OAuth: concurrent first sign-ins of one identity create one user",
    async fn({ db }) {
      const email = newEmail("oauth-race");
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          findOrCreateOAuthUser(db, {
            provider: "github",
            providerUserId: "race" + email,
            email,
            emailVerified: true,
          })),
      );
      assert.ok(results.every((r) => r.ok));
      assert.equal(new Set(results.map((r) => r.ok ? r.userId : "")).size, 1);
      assert.equal(results.filter((r) => r.ok && r.created).length, 1);
    },
  },
  {
    name: "findOrCreateOAuthUser error codes",
    async fn({ db, fresh }) {
      const base = {
        provider: "google",
        providerUserId: "x" + newEmail(),
        email: newEmail(),
        emailVerified: true,
      };
      const e = async (p: unknown, d = db) => {
        const r = await findOrCreateOAuthUser(d, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(await e(null), "invalid_input");
      assert.equal(await e({ ...base, provider: "Google!" }), "invalid_input");
      assert.equal(await e({ ...base, providerUserId: "" }), "invalid_input");
      assert.equal(await e({ ...base, providerUserId: 1.5 }), "invalid_input");
      assert.equal(await e({ ...base, email: null }), "invalid_input");
      assert.equal(await e({ ...base, email: "nope" }), "invalid_email");
      assert.equal(await e({ ...base, emailVerified: "yes" }), "email_unverified");
      assert.equal(await e(base, brokenDb), "db_error");
      assert.equal(await e(base, await fresh()), "db_error");
    },
  },
];
