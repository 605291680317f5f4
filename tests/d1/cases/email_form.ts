/**
 * One canonical form of e-mail addresses in every flow: ASCII case is ignored, Unicode
 * look-alikes are other addresses (never the account they look like).
 */
import assert from "node:assert/strict";
import {
  findOrCreateOAuthUser,
  login,
  normalizeEmail,
  requestPasswordReset,
  signup,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { ITER, outbox, PASSWORD, SECRET } from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

export const emailFormCases: Case[] = [
  {
    name:
      "e-mail form: a Kelvin-sign look-alike is another address in sign-in, signup, reset and OAuth",
    async fn({ db }) {
      const kate = await verifiedUser(db);
      assert.match(kate.email, /^user-/);
      const real = kate.email.replace(/^user/, "kate");
      await db.prepare("UPDATE users SET email = ? WHERE id = ?").bind(real, kate.id).run();
      const kelvin = `\u212A${real.slice(1)}`; // KELVIN SIGN, lowercases and normalizes to "k"
      assert.equal(normalizeEmail(kelvin), kelvin);
      assert.equal(normalizeEmail(real.toUpperCase()), real);

      assert.equal(
        (await login(db, { email: real.toUpperCase(), password: PASSWORD, iterations: ITER })).ok,
        true,
      );
      assert.deepEqual(await login(db, { email: kelvin, password: PASSWORD, iterations: ITER }), {
        ok: false,
        error: "invalid_credentials",
      });

      const box = outbox();
      const s = await signup(db, {
        email: kelvin,
        password: "look-alike's passphrase",
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
      });
      assert.ok(s.ok);
      assert.deepEqual(
        box.mails.map((m) => m.to),
        [kelvin],
        "a code to the look-alike, no notice to kate",
      );
      assert.match(box.mails[0].text, /\b\d{6}\b/);

      await requestPasswordReset(db, {
        email: kelvin,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: "https://x.example",
      });
      assert.ok(box.mails.every((m) => m.to !== real), "kate gets no reset link");

      const o = await findOrCreateOAuthUser(db, {
        provider: "github",
        providerUserId: `gh-${real}`,
        email: kelvin,
        emailVerified: true,
      });
      assert.ok(o.ok);
      assert.notEqual(o.userId, kate.id, "a provider's look-alike address never links to kate");
      const rows = await db.prepare("SELECT email FROM users WHERE id IN (?, ?) ORDER BY email")
        .bind(kate.id, o.userId)
        .all<{ email: string }>();
      assert.deepEqual(rows.results.map((r) => r.email).sort(), [real, kelvin].sort());
    },
  },
];
