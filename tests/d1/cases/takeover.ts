/**
 * Account takeover before verification: an attacker signs up with the victim's address and
 * their own password. Whatever the order of signups, resends and other verifications, the
 * code in the victim's inbox must never confirm the attacker's password.
 */
import assert from "node:assert/strict";
import {
  confirmEmailChange,
  type D1Database,
  type EmailSender,
  findOrCreateOAuthUser,
  login,
  OTP_RESEND_SECONDS,
  requestEmailChange,
  requestPasswordReset,
  resendOtp,
  resetPassword,
  signup,
  verifyOtp,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { codeIn, ITER, newEmail, outbox, PASSWORD, SECRET, tokenIn } from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

const ATTACKER = "attacker's own passphrase";
const VICTIM = "the victim's own passphrase";
const MINUTE = OTP_RESEND_SECONDS * 1000;

/** A signup by someone; resolves to its attempt. */
async function signUp(
  db: D1Database,
  email: string,
  password: string,
  send: EmailSender,
  now: number,
): Promise<string> {
  const r = await signup(db, {
    email,
    password,
    secret: SECRET,
    sendEmail: send,
    iterations: ITER,
    now,
  });
  if (!r.ok) throw new Error(`signup failed: ${r.error}`);
  return r.attempt;
}

const canLogin = async (db: D1Database, email: string, password: string) =>
  (await login(db, { email, password, iterations: ITER })).ok;

export const takeoverCases: Case[] = [
  {
    name:
      "takeover: attacker signs up first, victim inside the throttle; the inbox code never sets the attacker's password",
    async fn({ db }) {
      const inbox = outbox();
      const email = newEmail("victim");
      const now = Date.now();
      const attacker = await signUp(db, email, ATTACKER, inbox.send, now);
      const victim = await signUp(db, email, VICTIM, inbox.send, now + 10_000);
      assert.equal(inbox.mails.length, 1, "the throttle sent no second code");
      const code = codeIn(inbox.mails[0]);
      // The victim types the only code in the inbox: it was sent for the attacker's signup.
      assert.deepEqual(
        await verifyOtp(db, { email, code, attempt: victim, secret: SECRET, now: now + 20_000 }),
        { ok: false, error: "invalid_code" },
      );
      // Even the attacker's own attempt with that code confirms nothing: the victim's signup
      // replaced the pending password.
      assert.deepEqual(
        await verifyOtp(db, { email, code, attempt: attacker, secret: SECRET, now: now + 20_000 }),
        { ok: false, error: "invalid_code" },
      );
      assert.equal(await canLogin(db, email, ATTACKER), false);
      // The victim asks for a new code once the throttle allows, and gets in with their password.
      const resend = (attempt: string) =>
        resendOtp(db, {
          email,
          attempt,
          secret: SECRET,
          sendEmail: inbox.send,
          now: now + MINUTE + 10_000,
        });
      assert.deepEqual(await resend(attacker), { ok: true });
      assert.equal(inbox.mails.length, 1, "the replaced signup gets no code");
      assert.deepEqual(await resend(victim), { ok: true });
      assert.equal(inbox.mails.length, 2);
      const fresh = codeIn(inbox.mails[1]);
      const v = await verifyOtp(db, {
        email,
        code: fresh,
        attempt: victim,
        secret: SECRET,
        now: now + MINUTE + 20_000,
      });
      assert.equal(v.ok, true);
      assert.equal(await canLogin(db, email, VICTIM), true);
      assert.equal(await canLogin(db, email, ATTACKER), false);
    },
  },
  {
    name:
      "takeover: attacker signs up after the victim; the latest code in the inbox confirms only the signup it was sent for",
    async fn({ db }) {
      const inbox = outbox();
      const email = newEmail("victim");
      const now = Date.now();
      const victim = await signUp(db, email, VICTIM, inbox.send, now);
      const attacker = await signUp(db, email, ATTACKER, inbox.send, now + MINUTE);
      assert.equal(inbox.mails.length, 2);
      const [first, latest] = inbox.mails.map(codeIn);
      const at = now + MINUTE + 5_000;
      for (const code of new Set([latest, first])) {
        assert.deepEqual(
          await verifyOtp(db, { email, code, attempt: victim, secret: SECRET, now: at }),
          { ok: false, error: "invalid_code" },
        );
      }
      assert.equal(await canLogin(db, email, ATTACKER), false);
      // The login of a pending account checks the latest signup's password only.
      assert.deepEqual(await login(db, { email, password: ATTACKER, iterations: ITER }), {
        ok: false,
        error: "email_not_verified",
      });
      assert.deepEqual(await login(db, { email, password: VICTIM, iterations: ITER }), {
        ok: false,
        error: "invalid_credentials",
      });
      // The victim completes the account with a reset link: the inbox decides the password.
      await requestPasswordReset(db, {
        email,
        secret: SECRET,
        sendEmail: inbox.send,
        appUrl: "https://x.example",
      });
      const reset = await resetPassword(db, {
        token: tokenIn(inbox.mails[2]),
        newPassword: VICTIM,
        secret: SECRET,
        iterations: ITER,
      });
      assert.equal(reset.ok, true);
      // After that, even the attacker's attempt with the right code sets nothing.
      assert.deepEqual(
        await verifyOtp(db, { email, code: latest, attempt: attacker, secret: SECRET, now: at }),
        { ok: false, error: "invalid_code" },
      );
      assert.equal(await canLogin(db, email, VICTIM), true);
      assert.equal(await canLogin(db, email, ATTACKER), false);
    },
  },
  {
    name:
      "takeover: an OAuth sign-in of a pending address drops the attacker's pending password and code",
    async fn({ db }) {
      const inbox = outbox();
      const email = newEmail("victim");
      const now = Date.now();
      const attacker = await signUp(db, email, ATTACKER, inbox.send, now);
      const r = await findOrCreateOAuthUser(db, {
        provider: "google",
        providerUserId: `g-${email}`,
        email,
        emailVerified: true,
        now: now + 1000,
      });
      assert.ok(r.ok && !r.created);
      assert.deepEqual(
        await verifyOtp(db, {
          email,
          code: codeIn(inbox.mails[0]),
          attempt: attacker,
          secret: SECRET,
          now: now + 2000,
        }),
        { ok: false, error: "invalid_code" },
      );
      assert.equal(await canLogin(db, email, ATTACKER), false);
      // A later signup of the now verified address sends a notice, not a code.
      await signUp(db, email, ATTACKER, inbox.send, now + MINUTE * 2);
      assert.doesNotMatch(inbox.mails[1].text, /\b\d{6}\b/);
    },
  },
  {
    name:
      "takeover: an e-mail change onto an address with a pending signup moves there and discards that signup",
    async fn({ db }) {
      const inbox = outbox();
      const target = newEmail("victim");
      const now = Date.now();
      const attacker = await signUp(db, target, ATTACKER, inbox.send, now);
      const owner = await verifiedUser(db);
      const box = outbox();
      const r = await requestEmailChange(db, {
        userId: owner.id,
        newEmail: target,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: "https://x.example",
      });
      assert.deepEqual(r, { ok: true });
      assert.equal(box.mails.length, 1, "a pending signup does not hold the address");
      const c = await confirmEmailChange(db, { token: tokenIn(box.mails[0]), secret: SECRET });
      assert.deepEqual(c, { ok: true, userId: owner.id, email: target, notified: false });
      const n = await db.prepare("SELECT COUNT(*) AS n FROM users WHERE email = ?").bind(target)
        .first<{ n: number }>();
      assert.equal(n?.n, 1);
      assert.deepEqual(
        await verifyOtp(db, {
          email: target,
          code: codeIn(inbox.mails[0]),
          attempt: attacker,
          secret: SECRET,
          now: now + 1000,
        }),
        { ok: false, error: "invalid_code" },
      );
      assert.equal(await canLogin(db, target, ATTACKER), false);
      assert.equal(await canLogin(db, target, PASSWORD), true);
    },
  },
];
