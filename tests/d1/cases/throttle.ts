/**
 * Throttles of guessing: password sign-in per account and client, per account, per client;
 * signup codes per address; current-password checks per account. An attacker is slowed to a
 * counted number of tries per window; the owner gets back in after the backoff, from a known
 * client at once, and after a reset.
 */
import assert from "node:assert/strict";
import {
  changePassword,
  type D1Database,
  login,
  OTP_RESEND_SECONDS,
  requestPasswordReset,
  resendOtp,
  resetPassword,
  signup,
  THROTTLE,
  verifyOtp,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { codeIn, ITER, newEmail, outbox, PASSWORD, SECRET, tokenIn } from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

let clients = 0;
/** A client address no other case uses. */
const newClient = () => `198.18.${(++clients >> 8) & 255}.${clients & 255}`;

const WRONG = "not the password at all";

type Try = { ok: boolean; error?: string; retryAfter?: number };

function signIn(
  db: D1Database,
  email: string,
  password: string,
  client: string | undefined,
  now: number,
): Promise<Try> {
  return login(db, { email, password, client, now, iterations: ITER });
}

/**
 * Guesses as fast as the throttle allows from `start` for `seconds`, moving the clock by the
 * `retryAfter` of each refusal; resolves to the number of guesses the throttle let through.
 */
async function guessFor(
  db: D1Database,
  email: string,
  client: () => string,
  start: number,
  seconds: number,
): Promise<{ allowed: number; end: number }> {
  let now = start;
  let allowed = 0;
  while (now < start + seconds * 1000) {
    const r = await signIn(db, email, WRONG, client(), now);
    if (!r.ok && r.error === "too_many_attempts") {
      assert.ok(Number.isInteger(r.retryAfter) && r.retryAfter! >= 1, JSON.stringify(r));
      now += r.retryAfter! * 1000;
    } else {
      assert.deepEqual(r, { ok: false, error: "invalid_credentials" });
      allowed++;
    }
  }
  return { allowed, end: now };
}

export const throttleCases: Case[] = [
  {
    name:
      "throttle: one client guessing one account gets 5 tries, then waits of 1, 2, 4 s … up to 15 min; 17 guesses in an hour",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const attacker = newClient();
      const t = Date.now();
      for (let i = 0; i < THROTTLE.accountClient; i++) {
        assert.deepEqual(await signIn(db, u.email, WRONG, attacker, t), {
          ok: false,
          error: "invalid_credentials",
        });
      }
      // The try that started the wait was counted in every bucket (one statement reads the
      // whole table before it changes a row).
      const counts = await db.prepare(
        "SELECT account, client, failures FROM auth_throttle WHERE kind = 'sign-in' AND (account = ? OR client = ?) ORDER BY account, client",
      ).bind(u.email, attacker).all<{ account: string; client: string; failures: number }>();
      assert.deepEqual(counts.results, [
        { account: "", client: attacker, failures: 5 },
        { account: u.email, client: "", failures: 5 },
        { account: u.email, client: attacker, failures: 5 },
      ]);
      // Refused before the password is checked: even the right one waits.
      assert.deepEqual(await signIn(db, u.email, PASSWORD, attacker, t), {
        ok: false,
        error: "too_many_attempts",
        retryAfter: 1,
      });
      assert.deepEqual(await signIn(db, u.email, WRONG, attacker, t + 999), {
        ok: false,
        error: "too_many_attempts",
        retryAfter: 1,
      });
      assert.equal(
        (await signIn(db, u.email, WRONG, attacker, t + 1000)).error,
        "invalid_credentials",
      );
      assert.equal((await signIn(db, u.email, WRONG, attacker, t + 1000)).retryAfter, 2);
      assert.equal(
        (await signIn(db, u.email, WRONG, attacker, t + 3000)).error,
        "invalid_credentials",
      );
      assert.equal((await signIn(db, u.email, WRONG, attacker, t + 3000)).retryAfter, 4);
      // The rest of the hour at full speed: 5 + 1 + 1 guesses so far; waits 4 … 512 s, then
      // 900 s each: 17 guesses in the first hour (today: about 22 a second).
      const hour = await guessFor(db, u.email, () => attacker, t + 3000, 3597);
      assert.equal(7 + hour.allowed, 17);
      // The owner, from a client of their own, is not slowed by it.
      assert.equal((await signIn(db, u.email, PASSWORD, newClient(), hour.end - 60_000)).ok, true);
      // Nor is the attacker's client locked out for good: once the wait is over, the right
      // password (an owner behind the same address) gets in.
      assert.equal((await signIn(db, u.email, PASSWORD, attacker, hour.end)).ok, true);
    },
  },
  {
    name:
      "throttle: a new client per guess gets 20 on the account, then waits; known clients are not slowed; a reset clears",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const home = newClient();
      const t = Date.now();
      assert.equal((await signIn(db, u.email, PASSWORD, home, t)).ok, true); // now known
      for (let i = 0; i < THROTTLE.account; i++) {
        assert.equal(
          (await signIn(db, u.email, WRONG, newClient(), t)).error,
          "invalid_credentials",
        );
      }
      assert.deepEqual(await signIn(db, u.email, WRONG, newClient(), t), {
        ok: false,
        error: "too_many_attempts",
        retryAfter: 1,
      });
      // Six hours of it: after the 20, waits of 1 … 512 s (10 guesses), then one every 15 min.
      const day = await guessFor(db, u.email, newClient, t, 6 * 3600);
      assert.equal(day.allowed, 10 + Math.floor((6 * 3600 - 1023) / 900));
      // One more guess starts a 15-minute wait for every client not known to the account…
      assert.equal(
        (await signIn(db, u.email, WRONG, newClient(), day.end)).error,
        "invalid_credentials",
      );
      assert.deepEqual(await signIn(db, u.email, PASSWORD, newClient(), day.end), {
        ok: false,
        error: "too_many_attempts",
        retryAfter: THROTTLE.maxDelaySeconds,
      });
      // …but the owner's known client signs in during the attack, and that clears the account.
      assert.equal((await signIn(db, u.email, PASSWORD, home, day.end)).ok, true);
      assert.equal(
        (await signIn(db, u.email, WRONG, newClient(), day.end)).error,
        "invalid_credentials",
      );
      // Filled again, a new client of the owner waits; a reset clears it at once.
      for (let i = 1; i < THROTTLE.account; i++) {
        await signIn(db, u.email, WRONG, newClient(), day.end);
      }
      const laptop = newClient();
      assert.equal(
        (await signIn(db, u.email, PASSWORD, laptop, day.end)).error,
        "too_many_attempts",
      );
      const box = outbox();
      await requestPasswordReset(db, {
        email: u.email,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: "https://x.example",
        now: day.end,
      });
      const reset = await resetPassword(db, {
        token: tokenIn(box.mails[0]),
        newPassword: "a passphrase after the reset",
        secret: SECRET,
        iterations: ITER,
        now: day.end,
      });
      assert.equal(reset.ok, true);
      assert.equal(
        (await signIn(db, u.email, "a passphrase after the reset", laptop, day.end)).ok,
        true,
      );
    },
  },
  {
    name:
      "throttle: unknown addresses are throttled like accounts; without a client only the account bucket counts",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const ghost = newEmail("nobody");
      const t = Date.now();
      for (const email of [u.email, ghost]) {
        for (let i = 0; i < THROTTLE.account; i++) {
          assert.equal((await signIn(db, email, WRONG, undefined, t)).error, "invalid_credentials");
        }
        assert.deepEqual(await signIn(db, email, WRONG, undefined, t), {
          ok: false,
          error: "too_many_attempts",
          retryAfter: 1,
        });
      }
      assert.equal((await signIn(db, u.email, PASSWORD, undefined, t + 1000)).ok, true);
      assert.deepEqual(
        await login(db, { email: u.email, password: PASSWORD, client: 42 as never }),
        { ok: false, error: "invalid_input" },
      );
    },
  },
  {
    name: "throttle: 30 concurrent guesses from one client: exactly 5 are checked",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const attacker = newClient();
      const t = Date.now();
      const results = await Promise.all(
        Array.from({ length: 30 }, () => signIn(db, u.email, WRONG, attacker, t)),
      );
      assert.equal(results.filter((r) => r.error === "invalid_credentials").length, 5);
      assert.equal(results.filter((r) => r.error === "too_many_attempts").length, 25);
    },
  },
  {
    name:
      "throttle: one client across accounts gets 100 failures, then waits; its successes are not failures; IPv6 counts per /64",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const office = newClient();
      const t = Date.now();
      // Concurrently: each guess is on another account; the client's bucket counts atomically.
      const spray = await Promise.all(
        Array.from(
          { length: THROTTLE.client - 1 },
          () => signIn(db, newEmail("spray"), WRONG, office, t),
        ),
      );
      assert.deepEqual(new Set(spray.map((r) => r.error)), new Set(["invalid_credentials"]));
      for (let i = 0; i < 5; i++) {
        assert.equal((await signIn(db, u.email, PASSWORD, office, t)).ok, true);
      }
      assert.equal(
        (await signIn(db, newEmail("spray"), WRONG, office, t)).error,
        "invalid_credentials",
      );
      assert.deepEqual(await signIn(db, newEmail("spray"), WRONG, office, t), {
        ok: false,
        error: "too_many_attempts",
        retryAfter: 1,
      });
      // One IPv6 host holds a /64: its addresses share the account-and-client bucket.
      const v = await verifiedUser(db);
      const net = `2001:db8:${(clients++ % 65_535).toString(16)}:7`;
      for (let i = 1; i <= THROTTLE.accountClient; i++) {
        assert.equal(
          (await signIn(db, v.email, WRONG, `${net}::${i}`, t)).error,
          "invalid_credentials",
        );
      }
      assert.equal(
        (await signIn(db, v.email, WRONG, `[${net}:0:0:0:99]`, t)).error,
        "too_many_attempts",
      );
      assert.equal(
        (await signIn(db, v.email, WRONG, `${net.replace(/7$/, "8")}::1`, t)).error,
        "invalid_credentials",
      );
      // An IPv4-mapped address is its IPv4 address.
      const w = await verifiedUser(db);
      const v4 = newClient();
      for (let i = 0; i < THROTTLE.accountClient; i++) await signIn(db, w.email, WRONG, v4, t);
      assert.equal(
        (await signIn(db, w.email, WRONG, `::ffff:${v4}`, t)).error,
        "too_many_attempts",
      );
    },
  },
  {
    name:
      "throttle: wrong signup codes of an address: 10 over all its codes, then waits; the right code after it works",
    async fn({ db }) {
      const box = outbox();
      const email = newEmail();
      const t = Date.now();
      const s = await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
        now: t,
      });
      assert.ok(s.ok);
      const verify = (code: string, now: number): Promise<Try> =>
        verifyOtp(db, { email, code, attempt: s.attempt, secret: SECRET, now });
      const wrong = (code: string) => code === "000000" ? "111111" : "000000";
      const resend = (now: number) =>
        resendOtp(db, { email, attempt: s.attempt, secret: SECRET, sendEmail: box.send, now });
      // 4 wrong tries on each of two codes, 2 on a third: 10 wrong codes for the address.
      const minute = OTP_RESEND_SECONDS * 1000;
      for (const [n, at] of [[4, t], [4, t + minute], [2, t + 2 * minute]]) {
        if (at > t) await resend(at);
        const code = codeIn(box.mails.at(-1));
        for (let i = 0; i < n; i++) {
          assert.equal((await verify(wrong(code), at)).error, "invalid_code");
        }
      }
      assert.equal(box.mails.length, 3);
      const code = codeIn(box.mails[2]);
      const at = t + 2 * minute;
      assert.deepEqual(await verify(code, at), {
        ok: false,
        error: "too_many_attempts",
        retryAfter: 1,
      });
      assert.equal((await verify(code, at + 1000)).ok, true);
    },
  },
  {
    name:
      "throttle: wrong current passwords of a signed-in account: 5, then waits; the right one after it works",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const t = Date.now();
      const change = (currentPassword: string, now: number): Promise<Try> =>
        changePassword(db, {
          userId: u.id,
          currentPassword,
          newPassword: "another passphrase",
          iterations: ITER,
          now,
        });
      for (let i = 0; i < THROTTLE.reauth; i++) {
        assert.deepEqual(await change(WRONG, t), { ok: false, error: "wrong_password" });
      }
      assert.deepEqual(await change(PASSWORD, t), {
        ok: false,
        error: "too_many_attempts",
        retryAfter: 1,
      });
      assert.deepEqual(await change(PASSWORD, t + 1000), { ok: true });
    },
  },
];
