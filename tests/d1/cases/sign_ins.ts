/** The sign-ins of an account: linked providers, and a first password for a provider account. */
import assert from "node:assert/strict";
import {
  createUserSession,
  findOrCreateOAuthUser,
  listLinkedSignIns,
  login,
  readUserSession,
  setPassword,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { ITER, newEmail } from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

const SESSION = { secret: "session secret of the sign-in tests", cookieName: "__Host-t" };

export const signInCases: Case[] = [
  {
    name: "sign-ins: linked providers listed; a provider account sets its first password once",
    async fn({ db }) {
      const email = newEmail("oauth");
      const made = await findOrCreateOAuthUser(db, {
        provider: "github",
        providerUserId: "gh-7",
        email,
        emailVerified: true,
        now: 1_700_000_000_000,
      });
      assert.ok(made.ok && made.created);
      const linked = await listLinkedSignIns(db, made.userId);
      assert.deepEqual(linked, {
        ok: true,
        signIns: [{ provider: "github", email, linkedAt: 1_700_000_000_000 }],
      });
      const now = Date.now();
      const fresh = { issuedAt: Math.floor(now / 1000) - 10 };
      const stale = { issuedAt: Math.floor(now / 1000) - 600 };
      const cookie = await createUserSession(db, { session: SESSION, userId: made.userId });
      assert.ok(cookie.ok);
      const other = new Request("https://x/", {
        headers: { cookie: cookie.setCookie.split(";")[0] },
      });
      assert.deepEqual(
        await setPassword(db, {
          userId: made.userId,
          newPassword: "my own passphrase",
          session: stale,
        }),
        { ok: false, error: "reauth_required" },
      );
      assert.deepEqual(
        await setPassword(db, { userId: made.userId, newPassword: "short", session: fresh }),
        { ok: false, error: "password_too_short" },
      );
      const set = await setPassword(db, {
        userId: made.userId,
        newPassword: "my own passphrase",
        session: fresh,
        iterations: ITER,
      });
      assert.deepEqual(set, { ok: true });
      assert.equal(
        await readUserSession(db, { session: SESSION, request: other }),
        null,
        "other sessions end",
      );
      const l = await login(db, { email, password: "my own passphrase", iterations: ITER });
      assert.ok(l.ok && l.userId === made.userId);
      assert.deepEqual(
        await setPassword(db, {
          userId: made.userId,
          newPassword: "another passphrase",
          session: fresh,
        }),
        { ok: false, error: "has_password" },
      );
      const withPassword = await verifiedUser(db);
      assert.deepEqual(
        await setPassword(db, {
          userId: withPassword.id,
          newPassword: "another passphrase",
          session: fresh,
        }),
        { ok: false, error: "has_password" },
      );
      assert.deepEqual(await listLinkedSignIns(db, withPassword.id), { ok: true, signIns: [] });
      assert.deepEqual(
        await setPassword(db, {
          userId: "nobody",
          newPassword: "another passphrase",
          session: fresh,
        }),
        { ok: false, error: "not_found" },
      );
    },
  },
];
