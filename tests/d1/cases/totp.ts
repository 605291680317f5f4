import assert from "node:assert/strict";
import {
  changePassword,
  confirmTotpEnrolment,
  getSecondFactors,
  login,
  regenerateBackupCodes,
  removeTotp,
  removeUser,
  resetSecondFactor,
  startTotpEnrolment,
  totpQrSvg,
  verifyOtp,
  verifySecondFactor,
} from "../../../d1.ts";
import type { D1Database } from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { ITER, PASSWORD, SECRET } from "../_helpers.ts";
import { appCode, keyOfUri } from "../_totp.ts";
import { assertNoneInClear } from "../_at_rest.ts";
import { pendingUser, verifiedUser } from "./_user.ts";

/** A fixed clock in the middle of a 30-second step. */
const T = Date.UTC(2026, 5, 1, 12, 0, 15);

/** A verified user with a confirmed TOTP: its key (base32) and backup codes. */
async function totpUser(db: D1Database, now = T) {
  const u = await verifiedUser(db);
  const s = await startTotpEnrolment(db, {
    userId: u.id,
    password: PASSWORD,
    iterations: ITER,
    secret: SECRET,
    issuer: "Gatehouse tests",
    now,
  });
  assert.ok(s.ok, JSON.stringify(s));
  const key = keyOfUri(s.uri);
  assert.equal(key, s.secret);
  const c = await confirmTotpEnrolment(db, {
    userId: u.id,
    code: appCode(key, now),
    secret: SECRET,
    now,
  });
  assert.ok(c.ok, JSON.stringify(c));
  return { ...u, key, backupCodes: c.backupCodes, uri: s.uri };
}

/** `login`'s ticket for a user with a second factor. */
async function ticketOf(db: D1Database, email: string, now = T, extra = {}) {
  const l = await login(db, {
    email,
    password: PASSWORD,
    iterations: ITER,
    secret: SECRET,
    now,
    ...extra,
  });
  assert.equal(l.ok, false);
  assert.ok(
    !l.ok && l.error === "second_factor_required" && "ticket" in l && l.ticket,
    JSON.stringify(l),
  );
  return (l as { ticket: string }).ticket;
}

export const totpCases: Case[] = [
  {
    name: "totp: keepPending answers the unconfirmed key again (a wrong code keeps the QR code)",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const base = {
        userId: u.id,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        issuer: "Gatehouse tests",
        now: T,
      };
      const first = await startTotpEnrolment(db, { ...base, keepPending: true });
      assert.ok(first.ok);
      const wrong = await confirmTotpEnrolment(db, {
        userId: u.id,
        code: appCode(first.secret, T + 600_000),
        secret: SECRET,
        now: T,
      });
      assert.deepEqual(wrong, { ok: false, error: "invalid_code" });
      const again = await startTotpEnrolment(db, { ...base, keepPending: true });
      assert.deepEqual(again, first);
      const fresh = await startTotpEnrolment(db, base);
      assert.ok(fresh.ok && fresh.secret !== first.secret);
      const bad = await startTotpEnrolment(db, { ...base, keepPending: "yes" as never });
      assert.deepEqual(bad, { ok: false, error: "invalid_input" });
      const c = await confirmTotpEnrolment(db, {
        userId: u.id,
        code: appCode(fresh.secret, T),
        secret: SECRET,
        now: T,
      });
      assert.ok(c.ok);
      assert.deepEqual(await startTotpEnrolment(db, { ...base, keepPending: true }), {
        ok: false,
        error: "factor_exists",
      });
    },
  },
  {
    name: "totp: enrolment (URI, QR code), then sign-in asks for the code; each code works once",
    async fn({ db }) {
      const u = await totpUser(db);
      assert.match(
        u.uri,
        /^otpauth:\/\/totp\/Gatehouse%20tests:[^?]+\?secret=[A-Z2-7]{32}&issuer=/,
      );
      const svg = totpQrSvg(u.uri, { title: "Scan with your app" });
      assert.match(svg, /^<svg role="img" aria-label="Scan with your app" [^>]*><title>/);
      assert.equal(u.backupCodes.length, 10);
      for (const c of u.backupCodes) assert.match(c, /^[0-9a-z]{5}-[0-9a-z]{5}$/);
      assert.equal(new Set(u.backupCodes).size, 10);
      // Without the secret, login cannot sign a ticket: the account still does not sign in.
      const bare = await login(db, {
        email: u.email,
        password: PASSWORD,
        iterations: ITER,
        now: T,
      });
      assert.deepEqual(bare, { ok: false, error: "second_factor_required" });
      const ticket = await ticketOf(db, u.email);
      // The code of the enrolment's step was used: it does not sign in again.
      const used = await verifySecondFactor(db, {
        ticket,
        code: appCode(u.key, T),
        secret: SECRET,
        now: T,
      });
      assert.deepEqual(used, { ok: false, error: "invalid_code" });
      const later = T + 30_000;
      const next = appCode(u.key, later);
      const v = await verifySecondFactor(db, { ticket, code: next, secret: SECRET, now: later });
      assert.deepEqual(v, { ok: true, userId: u.id, method: "totp", backupCodesLeft: 10 });
      const again = await verifySecondFactor(db, {
        ticket,
        code: next,
        secret: SECRET,
        now: later,
      });
      assert.deepEqual(again, { ok: false, error: "invalid_code" });
      // A wrong password never reaches the second step.
      const wrong = await login(db, {
        email: u.email,
        password: "not it at all",
        iterations: ITER,
        secret: SECRET,
        now: T,
      });
      assert.deepEqual(wrong, { ok: false, error: "invalid_credentials" });
      const f = await getSecondFactors(db, { userId: u.id, now: later });
      assert.ok(f.ok);
      assert.equal(f.factors.totp, true);
      assert.equal(f.factors.totpSince, T);
    },
  },
  {
    name: "totp: ±1 step of drift is accepted, two steps are not; a newer code spends the older",
    async fn({ db }) {
      const u = await totpUser(db);
      const now = T + 10 * 30_000;
      const ticket = await ticketOf(db, u.email, now);
      const tooOld = await verifySecondFactor(db, {
        ticket,
        code: appCode(u.key, now - 60_000),
        secret: SECRET,
        now,
      });
      assert.deepEqual(tooOld, { ok: false, error: "invalid_code" });
      const tooNew = await verifySecondFactor(db, {
        ticket,
        code: appCode(u.key, now + 60_000),
        secret: SECRET,
        now,
      });
      assert.deepEqual(tooNew, { ok: false, error: "invalid_code" });
      const ahead = await verifySecondFactor(db, {
        ticket,
        code: appCode(u.key, now + 30_000),
        secret: SECRET,
        now,
      });
      assert.equal(ahead.ok, true);
      // The current step's code is older than the one just used: refused.
      const behind = await verifySecondFactor(db, {
        ticket,
        code: appCode(u.key, now),
        secret: SECRET,
        now,
      });
      assert.deepEqual(behind, { ok: false, error: "invalid_code" });
      const drift = await verifySecondFactor(db, {
        ticket: await ticketOf(db, u.email, now + 60_000),
        code: appCode(u.key, now + 30_000 * 3),
        secret: SECRET,
        now: now + 60_000,
      });
      assert.equal(drift.ok, true);
    },
  },
  {
    name: "totp: concurrent uses of one code sign in once",
    async fn({ db }) {
      const u = await totpUser(db);
      const now = T + 30_000;
      const ticket = await ticketOf(db, u.email, now);
      const code = appCode(u.key, now);
      const results = await Promise.all(
        Array.from(
          { length: 5 },
          () => verifySecondFactor(db, { ticket, code, secret: SECRET, now }),
        ),
      );
      assert.equal(results.filter((r) => r.ok).length, 1);
    },
  },
  {
    name: "totp: backup codes work once each, typed loosely; new ones replace the old",
    async fn({ db }) {
      const u = await totpUser(db);
      const ticket = await ticketOf(db, u.email);
      const [first, second] = u.backupCodes;
      const v = await verifySecondFactor(db, { ticket, code: first, secret: SECRET, now: T });
      assert.deepEqual(v, { ok: true, userId: u.id, method: "backup", backupCodesLeft: 9 });
      assert.deepEqual(
        await verifySecondFactor(db, { ticket, code: first, secret: SECRET, now: T }),
        {
          ok: false,
          error: "invalid_code",
        },
      );
      const loose = ` ${second.replace("-", "").toUpperCase()} `;
      assert.equal(
        (await verifySecondFactor(db, { ticket, code: loose, secret: SECRET, now: T })).ok,
        true,
      );
      const r = await regenerateBackupCodes(db, {
        userId: u.id,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        now: T,
      });
      assert.ok(r.ok);
      assert.equal(r.backupCodes.length, 10);
      const old = await verifySecondFactor(db, {
        ticket,
        code: u.backupCodes[2],
        secret: SECRET,
        now: T,
      });
      assert.deepEqual(old, { ok: false, error: "invalid_code" });
      const fresh = await verifySecondFactor(db, {
        ticket,
        code: r.backupCodes[0],
        secret: SECRET,
        now: T,
      });
      assert.deepEqual(fresh, { ok: true, userId: u.id, method: "backup", backupCodesLeft: 9 });
      const denied = await regenerateBackupCodes(db, {
        userId: u.id,
        password: "wrong one",
        iterations: ITER,
        secret: SECRET,
        now: T,
      });
      assert.deepEqual(denied, { ok: false, error: "wrong_password" });
    },
  },
  {
    name: "totp: remember this device skips the code until it expires, for that account only",
    async fn({ db }) {
      const u = await totpUser(db);
      const other = await totpUser(db);
      const now = T + 30_000;
      const v = await verifySecondFactor(db, {
        ticket: await ticketOf(db, u.email, now),
        code: appCode(u.key, now),
        secret: SECRET,
        rememberDevice: true,
        rememberDays: 7,
        deviceLabel: "Firefox on Linux",
        now,
      });
      assert.ok(v.ok && v.deviceToken);
      const trusted = await login(db, {
        email: u.email,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        trustedDevice: v.deviceToken,
        now: now + 86_400_000,
      });
      assert.deepEqual(trusted, { ok: true, userId: u.id });
      await ticketOf(db, other.email, now, { trustedDevice: v.deviceToken });
      await ticketOf(db, u.email, now + 7 * 86_400_000, { trustedDevice: v.deviceToken });
      await ticketOf(db, u.email, now, { trustedDevice: "x".repeat(43) });
      const f = await getSecondFactors(db, { userId: u.id, now });
      assert.ok(f.ok);
      assert.equal(f.factors.trustedDevices.length, 1);
      assert.equal(f.factors.trustedDevices[0].label, "Firefox on Linux");
      assert.equal(f.factors.trustedDevices[0].expiresAt, now + 7 * 86_400_000);
      for (const bad of [0, 366, 1.5, "7"]) {
        const r = await verifySecondFactor(db, {
          ticket: await ticketOf(db, u.email, now),
          code: "000000",
          secret: SECRET,
          rememberDevice: true,
          rememberDays: bad as number,
          now,
        });
        assert.deepEqual(r, { ok: false, error: "invalid_input" }, String(bad));
      }
    },
  },
  {
    name: "totp: wrong codes are throttled like passwords; the right one waits too",
    async fn({ db }) {
      const u = await totpUser(db);
      const now = T + 30_000;
      const ticket = await ticketOf(db, u.email, now);
      const right = appCode(u.key, now);
      const wrong = right === "000000" ? "111111" : "000000";
      for (let i = 0; i < 5; i++) {
        const r = await verifySecondFactor(db, {
          ticket,
          code: wrong,
          secret: SECRET,
          client: "203.0.113.5",
          now,
        });
        assert.deepEqual(r, { ok: false, error: "invalid_code" }, `try ${i + 1}`);
      }
      const blocked = await verifySecondFactor(db, {
        ticket,
        code: right,
        secret: SECRET,
        client: "203.0.113.5",
        now,
      });
      assert.equal(blocked.ok, false);
      assert.equal(!blocked.ok && blocked.error, "too_many_attempts");
      assert.ok(!blocked.ok && blocked.retryAfter && blocked.retryAfter >= 1);
      const waited = await verifySecondFactor(db, {
        ticket,
        code: right,
        secret: SECRET,
        client: "203.0.113.5",
        now: now + 2000,
      });
      assert.equal(waited.ok, true);
    },
  },
  {
    name: "totp: a ticket is bound to its purpose, its secret and the account's stamp",
    async fn({ db }) {
      const u = await totpUser(db);
      const now = T + 30_000;
      const ticket = await ticketOf(db, u.email, now);
      const code = appCode(u.key, now);
      for (
        const [t, s, at] of [
          [ticket, "another secret", now],
          [ticket.slice(0, -2) + "AA", SECRET, now],
          [ticket, SECRET, now + 301_000],
        ] as const
      ) {
        const r = await verifySecondFactor(db, { ticket: t, code, secret: s, now: at });
        assert.deepEqual(r, { ok: false, error: "invalid_token" });
      }
      const changed = await changePassword(db, {
        userId: u.id,
        currentPassword: PASSWORD,
        newPassword: "a brand new passphrase",
        iterations: ITER,
        now,
      });
      assert.ok(changed.ok);
      const stale = await verifySecondFactor(db, { ticket, code, secret: SECRET, now });
      assert.deepEqual(stale, { ok: false, error: "invalid_token" });
    },
  },
  {
    name: "totp: a site that requires a second factor has accounts without one enrol first",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const l = await login(db, {
        email: u.email,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        requireSecondFactor: true,
        now: T,
      });
      assert.ok(!l.ok && l.error === "second_factor_setup_required" && "ticket" in l && l.ticket);
      const ticket = (l as { ticket: string }).ticket;
      // A setup ticket does not finish a sign-in.
      const v = await verifySecondFactor(db, { ticket, code: "123456", secret: SECRET, now: T });
      assert.deepEqual(v, { ok: false, error: "invalid_token" });
      const s = await startTotpEnrolment(db, { ticket, secret: SECRET, issuer: "Site", now: T });
      assert.ok(s.ok);
      const c = await confirmTotpEnrolment(db, {
        ticket,
        code: appCode(s.secret, T),
        secret: SECRET,
        now: T,
      });
      assert.ok(c.ok);
      assert.equal(c.userId, u.id);
      await ticketOf(db, u.email, T + 30_000, { requireSecondFactor: true });
      assert.equal(
        (await login(db, {
          email: u.email,
          password: PASSWORD,
          iterations: ITER,
          requireSecondFactor: "yes" as unknown as boolean,
        })).ok,
        false,
      );
    },
  },
  {
    name:
      "totp: on a site that requires a second factor, a verified signup sets one up before it is signed in",
    async fn({ db }) {
      const p = await pendingUser(db);
      const events: string[] = [];
      const base = { email: p.email, attempt: p.attempt, secret: SECRET, now: T };
      assert.deepEqual(
        await verifyOtp(db, { ...base, code: p.code, requireSecondFactor: 1 as never }),
        { ok: false, error: "invalid_input" },
      );
      const v = await verifyOtp(db, {
        ...base,
        code: p.code,
        requireSecondFactor: true,
        onEvent: (e) => void events.push(`${e.type} ${e.detail.error}`),
      });
      assert.ok(
        !v.ok && v.error === "second_factor_setup_required" && "ticket" in v,
        JSON.stringify(v),
      );
      assert.deepEqual(events, ["sign_in.second_factor_required second_factor_setup_required"]);
      // The address is verified: the password signs in, to the same setup step.
      const l = await login(db, {
        email: p.email,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        requireSecondFactor: true,
        now: T,
      });
      assert.ok(!l.ok && l.error === "second_factor_setup_required");
      const ticket = v.ticket!;
      const s = await startTotpEnrolment(db, { ticket, secret: SECRET, issuer: "Site", now: T });
      assert.ok(s.ok);
      const c = await confirmTotpEnrolment(db, {
        ticket,
        code: appCode(s.secret, T),
        secret: SECRET,
        now: T,
      });
      assert.ok(c.ok && c.backupCodes.length === 10);
    },
  },
  {
    name: "totp: enrolment needs the password or a fresh session; one confirmed TOTP at a time",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const base = { userId: u.id, secret: SECRET, issuer: "Site", now: T };
      assert.deepEqual(await startTotpEnrolment(db, base), { ok: false, error: "reauth_required" });
      assert.deepEqual(
        await startTotpEnrolment(db, { ...base, password: "nope nope nope", iterations: ITER }),
        {
          ok: false,
          error: "wrong_password",
        },
      );
      const stale = await startTotpEnrolment(db, {
        ...base,
        session: { issuedAt: T / 1000 - 301 },
      });
      assert.deepEqual(stale, { ok: false, error: "reauth_required" });
      const first = await startTotpEnrolment(db, { ...base, session: { issuedAt: T / 1000 - 10 } });
      assert.ok(first.ok);
      // A second start replaces the unconfirmed key: the first one's codes do not confirm.
      const second = await startTotpEnrolment(db, {
        ...base,
        session: { issuedAt: T / 1000 - 10 },
      });
      assert.ok(second.ok);
      assert.notEqual(first.secret, second.secret);
      const old = await confirmTotpEnrolment(db, {
        userId: u.id,
        code: appCode(first.secret, T),
        secret: SECRET,
        now: T,
      });
      assert.deepEqual(old, { ok: false, error: "invalid_code" });
      const ok = await confirmTotpEnrolment(db, {
        userId: u.id,
        code: appCode(second.secret, T),
        secret: SECRET,
        now: T,
      });
      assert.ok(ok.ok);
      assert.deepEqual(await startTotpEnrolment(db, { ...base, session: { issuedAt: T / 1000 } }), {
        ok: false,
        error: "factor_exists",
      });
      assert.deepEqual(
        await confirmTotpEnrolment(db, { userId: u.id, code: "123456", secret: SECRET, now: T }),
        {
          ok: false,
          error: "not_found",
        },
      );
    },
  },
  {
    name: "totp: removal (by the user, by an operator) signs in with the password alone again",
    async fn({ db }) {
      const u = await totpUser(db);
      const r = await removeTotp(db, {
        userId: u.id,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        now: T,
      });
      assert.deepEqual(r, { ok: true, removed: true });
      assert.deepEqual(
        await login(db, {
          email: u.email,
          password: PASSWORD,
          iterations: ITER,
          secret: SECRET,
          now: T,
        }),
        { ok: true, userId: u.id },
      );
      const w = await totpUser(db);
      assert.deepEqual(await resetSecondFactor(db, { userId: w.id }), { ok: true, removed: true });
      assert.deepEqual(await resetSecondFactor(db, { userId: w.id }), { ok: true, removed: false });
      const f = await getSecondFactors(db, { userId: w.id });
      assert.ok(f.ok);
      assert.deepEqual(f.factors, {
        totp: false,
        totpSince: null,
        backupCodesLeft: 0,
        trustedDevices: [],
      });
    },
  },
  {
    name: "totp: removing the account removes its key, backup codes and trusted devices",
    async fn({ db }) {
      const u = await totpUser(db);
      const now = T + 30_000;
      const v = await verifySecondFactor(db, {
        ticket: await ticketOf(db, u.email, now),
        code: appCode(u.key, now),
        secret: SECRET,
        rememberDevice: true,
        now,
      });
      assert.ok(v.ok);
      const gone = await removeUser(db, {
        userId: u.id,
        password: PASSWORD,
        iterations: ITER,
        sendEmail: () => {},
      });
      assert.ok(gone.ok);
      for (const table of ["totp_factors", "backup_codes", "trusted_devices"]) {
        const row = await db.prepare(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`).bind(
          u.id,
        )
          .first<{ n: number }>();
        assert.equal(Number(row?.n), 0, table);
      }
    },
  },
  {
    name:
      "at rest: TOTP keys are sealed, backup codes and device tokens only hashed, tickets not stored",
    async fn({ fresh }) {
      const db = await fresh();
      const { applySchema } = await import("../../../d1.ts");
      await applySchema(db);
      const u = await totpUser(db);
      const now = T + 30_000;
      const ticket = await ticketOf(db, u.email, now);
      const v = await verifySecondFactor(db, {
        ticket,
        code: appCode(u.key, now),
        secret: SECRET,
        rememberDevice: true,
        now,
      });
      assert.ok(v.ok && v.deviceToken);
      await assertNoneInClear(db, [
        u.key,
        ticket,
        ticket.slice(ticket.lastIndexOf(".") + 1),
        v.deviceToken,
        ...u.backupCodes,
        ...u.backupCodes.map((c) => c.replace("-", "")),
      ]);
    },
  },
];
