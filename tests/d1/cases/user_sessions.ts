/** Sessions as records: list, name, end one or all others; the step-up before changes. */
import assert from "node:assert/strict";
import {
  confirmTotpEnrolment,
  createUserSession,
  type D1Database,
  deviceOf,
  endOtherSessions,
  endSession,
  listUserSessions,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  placeOf,
  readUserSession,
  removeTotp,
  renameSession,
  requestEmailChange,
  startTotpEnrolment,
  stepUp,
  verifyPasskeyRegistration,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { ITER, newEmail, outbox, PASSWORD, SECRET } from "../_helpers.ts";
import { create, get } from "../_authenticator.ts";
import { appCode } from "../_totp.ts";
import { verifiedUser } from "./_user.ts";

const SESSION = { secret: "session secret of the tests", cookieName: "__Host-s" };
const APP = "https://example.com";
const T = Date.UTC(2026, 5, 1, 12, 0, 15);
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const SAFARI =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";

const request = (cookie: string) => new Request(APP, { headers: { cookie } });

/** A recorded sign-in: the cookie and the session as `readUserSession` gives it. */
async function signIn(db: D1Database, userId: string, userAgent: string, ip: string, now = T) {
  const r = await createUserSession(db, {
    session: SESSION,
    userId,
    record: { userAgent, ip, method: "password" },
    now,
  });
  assert.ok(r.ok, JSON.stringify(r));
  const cookie = r.setCookie.split(";")[0];
  const me = await readUserSession(db, {
    session: SESSION,
    request: request(cookie),
    now,
    recorded: true,
  });
  assert.ok(me);
  return { cookie, session: me.session };
}

export const userSessionCases: Case[] = [
  {
    name: "sessions as records: device, place, times; name one, end one, end all others",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const laptop = await signIn(db, u.id, FIREFOX, "203.0.113.77");
      const phone = await signIn(db, u.id, SAFARI, "2001:db8:abcd:12::1", T + 1000);
      const tablet = await signIn(db, u.id, "curl/8.0", "198.51.100.3", T + 2000);
      const l = await listUserSessions(db, {
        userId: u.id,
        currentId: laptop.session.id,
        now: T + 3000,
      });
      assert.ok(l.ok);
      assert.deepEqual(
        l.sessions.map((s) => [s.device, s.place, s.current, s.method]),
        [
          ["Unknown device", "198.51.100.0/24", false, "password"],
          ["Safari on iOS", "2001:db8:abcd::/48", false, "password"],
          ["Firefox on Linux", "203.0.113.0/24", true, "password"],
        ],
      );
      assert.equal(l.sessions[2].createdAt, T);
      assert.equal(l.sessions[2].expiresAt, T + 604_800_000);
      // Last seen moves with requests, to the minute.
      await readUserSession(db, {
        session: SESSION,
        request: request(laptop.cookie),
        now: T + 30_000,
        recorded: true,
      });
      await readUserSession(db, {
        session: SESSION,
        request: request(laptop.cookie),
        now: T + 90_000,
        recorded: true,
      });
      const seen = await listUserSessions(db, { userId: u.id, now: T + 90_000 });
      assert.ok(seen.ok);
      assert.equal(seen.sessions[0].id, laptop.session.id);
      assert.equal(seen.sessions[0].lastSeenAt, T + 90_000);
      assert.deepEqual(
        await renameSession(db, { userId: u.id, sessionId: phone.session.id, name: " My phone " }),
        {
          ok: true,
          name: "My phone",
        },
      );
      const other = await verifiedUser(db);
      assert.deepEqual(
        await renameSession(db, { userId: other.id, sessionId: phone.session.id, name: "x" }),
        {
          ok: false,
          error: "not_found",
        },
      );
      assert.deepEqual(
        await renameSession(db, { userId: u.id, sessionId: phone.session.id, name: "\u0007" }),
        {
          ok: false,
          error: "invalid_name",
        },
      );
      // Ending the phone's session ends every copy of its cookie.
      assert.deepEqual(
        await endSession(db, { userId: other.id, sessionId: phone.session.id, now: T }),
        {
          ok: false,
          error: "not_found",
        },
      );
      assert.deepEqual(
        await endSession(db, { userId: u.id, sessionId: phone.session.id, now: T }),
        { ok: true },
      );
      assert.equal(
        await readUserSession(db, { session: SESSION, request: request(phone.cookie), now: T }),
        null,
      );
      assert.ok(
        await readUserSession(db, { session: SESSION, request: request(laptop.cookie), now: T }),
      );
      // All others: the tablet goes, the laptop stays.
      assert.deepEqual(
        await endOtherSessions(db, { userId: u.id, keepId: laptop.session.id, now: T }),
        {
          ok: true,
          ended: 1,
        },
      );
      assert.equal(
        await readUserSession(db, { session: SESSION, request: request(tablet.cookie), now: T }),
        null,
      );
      assert.ok(
        await readUserSession(db, { session: SESSION, request: request(laptop.cookie), now: T }),
      );
      const left = await listUserSessions(db, {
        userId: u.id,
        currentId: laptop.session.id,
        now: T,
      });
      assert.ok(left.ok);
      assert.deepEqual(left.sessions.map((s) => s.id), [laptop.session.id]);
    },
  },
  {
    name: "step-up: an older session re-enters a factor before changes (password, TOTP, passkey)",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const { session } = await signIn(db, u.id, FIREFOX, "203.0.113.8");
      const later = T + 3600_000;
      const box = outbox();
      const change = (now: number) =>
        requestEmailChange(db, {
          userId: u.id,
          newEmail: newEmail("stepped"),
          session,
          secret: SECRET,
          sendEmail: box.send,
          appUrl: APP,
          now,
        });
      // Fresh at sign-in (a factor was just entered), stale an hour later.
      assert.deepEqual(await change(T + 60_000), { ok: true });
      assert.deepEqual(await change(later), { ok: false, error: "reauth_required" });
      assert.deepEqual(
        await stepUp(db, {
          userId: u.id,
          session,
          password: "wrong passphrase",
          iterations: ITER,
          now: later,
        }),
        {
          ok: false,
          error: "wrong_password",
        },
      );
      const up = await stepUp(db, {
        userId: u.id,
        session,
        password: PASSWORD,
        iterations: ITER,
        now: later,
      });
      assert.deepEqual(up, { ok: true, verifiedAt: later, method: "password" });
      assert.deepEqual(await change(later + 60_000), { ok: true });
      assert.deepEqual(await change(later + 301_000), { ok: false, error: "reauth_required" });
      // With a TOTP code (once), then with a passkey.
      const s = await startTotpEnrolment(db, {
        userId: u.id,
        session,
        secret: SECRET,
        issuer: "X",
        now: later + 1000,
      });
      assert.ok(s.ok);
      assert.ok(
        (await confirmTotpEnrolment(db, {
          userId: u.id,
          code: appCode(s.secret, later),
          secret: SECRET,
          now: later + 1000,
        })).ok,
      );
      const t2 = later + 7200_000;
      assert.deepEqual(await removeTotp(db, { userId: u.id, session, secret: SECRET, now: t2 }), {
        ok: false,
        error: "reauth_required",
      });
      const code = appCode(s.secret, t2);
      assert.equal(
        (await stepUp(db, { userId: u.id, session, code, secret: SECRET, now: t2 })).ok,
        true,
      );
      assert.deepEqual(await stepUp(db, { userId: u.id, session, code, secret: SECRET, now: t2 }), {
        ok: false,
        error: "invalid_code",
      });
      const rp = { id: "example.com", name: "Example", origin: APP };
      const reg = await passkeyRegistrationOptions(db, { userId: u.id, session, rp, now: t2 });
      assert.ok(reg.ok, JSON.stringify(reg));
      const made = await create(reg.options, { origin: APP });
      const added = await verifyPasskeyRegistration(db, {
        userId: u.id,
        session,
        ceremony: reg.ceremony,
        response: made.json,
        rp,
        now: t2,
      });
      assert.ok(added.ok);
      const t3 = t2 + 7200_000;
      const opts = await passkeySignInOptions(db, { rp, now: t3 });
      assert.ok(opts.ok);
      const answer = await get(opts.options, made.credential, { origin: APP });
      const viaPasskey = await stepUp(db, {
        userId: u.id,
        session,
        passkey: { ceremony: opts.ceremony, response: answer, rp },
        now: t3,
      });
      assert.deepEqual(viaPasskey, { ok: true, verifiedAt: t3, method: "passkey" });
      assert.deepEqual(
        await removeTotp(db, { userId: u.id, session, secret: SECRET, now: t3 + 1000 }),
        { ok: true, removed: true },
      );
      // Only a recorded session of this user can be stepped up; exactly one factor is given.
      assert.deepEqual(
        await stepUp(db, {
          userId: u.id,
          session: { id: "not recorded" },
          password: PASSWORD,
          now: t3,
        }),
        {
          ok: false,
          error: "not_found",
        },
      );
      assert.deepEqual(await stepUp(db, { userId: u.id, session, now: t3 }), {
        ok: false,
        error: "invalid_input",
      });
      assert.deepEqual(
        await stepUp(db, { userId: u.id, session, password: PASSWORD, code: "1", now: t3 }),
        {
          ok: false,
          error: "invalid_input",
        },
      );
    },
  },
  {
    name: "sessions as records: device and place of a user agent and an address",
    fn() {
      const cases: [string, string][] = [
        [FIREFOX, "Firefox on Linux"],
        [SAFARI, "Safari on iOS"],
        [
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
          "Edge on Windows",
        ],
        [
          "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
          "Chrome on macOS",
        ],
        [
          "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
          "Chrome on Android",
        ],
        ["", "Unknown device"],
      ];
      for (const [ua, device] of cases) assert.equal(deviceOf(ua), device, ua);
      assert.equal(placeOf("203.0.113.9"), "203.0.113.0/24");
      assert.equal(placeOf("::ffff:203.0.113.9"), "203.0.113.0/24");
      assert.equal(placeOf("[2001:0db8:00ab:1::7]"), "2001:db8:ab::/48");
      assert.equal(placeOf("::1"), "0:0:0::/48");
      for (const bad of ["", "300.1.1.1", "not an address", "1:2:3"]) {
        assert.equal(placeOf(bad), null, bad);
      }
      return Promise.resolve();
    },
  },
];
