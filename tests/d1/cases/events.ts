/** Sign-in events: the injected sink gets a typed event per outcome; the store lists them. */
import assert from "node:assert/strict";
import {
  type AuthEvent,
  authEventStore,
  changePassword,
  confirmEmailChange,
  confirmTotpEnrolment,
  createUserSession,
  endOtherSessions,
  endSession,
  findOrCreateOAuthUser,
  getUserByEmail,
  listAuthEvents,
  listUserSessions,
  login,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  regenerateBackupCodes,
  removePasskey,
  removeTotp,
  requestEmailChange,
  requestPasswordReset,
  resetPassword,
  signOut,
  signOutEverywhere,
  startTotpEnrolment,
  stepUp,
  verifyOtp,
  verifyPasskeyRegistration,
  verifyPasskeySignIn,
  verifySecondFactor,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { ITER, newEmail, outbox, PASSWORD, SECRET, tokenIn } from "../_helpers.ts";
import { create, get } from "../_authenticator.ts";
import { appCode } from "../_totp.ts";
import { pendingUser, verifiedUser } from "./_user.ts";

const T = Date.UTC(2026, 5, 1, 12, 0, 15);
const SESSION = { secret: "session secret of the tests", cookieName: "__Host-s" };
const APP = "https://example.com";
const rp = { id: "example.com", name: "Example", origin: APP };

export const eventCases: Case[] = [
  {
    name:
      "events: every outcome reaches the sink, typed, without secrets; the store lists them per user",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const got: AuthEvent[] = [];
      const store = authEventStore(db);
      const onEvent = async (e: AuthEvent) => {
        got.push(e);
        await store(e);
      };
      const client = "203.0.113.44";
      const base = { email: u.email, iterations: ITER, secret: SECRET, client, onEvent };
      assert.equal((await login(db, { ...base, password: "not the password", now: T })).ok, false);
      assert.ok((await login(db, { ...base, password: PASSWORD, now: T })).ok);
      const s = await startTotpEnrolment(db, {
        userId: u.id,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        issuer: "X",
        now: T,
      });
      assert.ok(s.ok);
      assert.ok(
        (await confirmTotpEnrolment(db, {
          userId: u.id,
          code: appCode(s.secret, T),
          secret: SECRET,
          onEvent,
          now: T,
        })).ok,
      );
      const later = T + 30_000;
      const l = await login(db, { ...base, password: PASSWORD, now: later });
      const ticket = (l as { ticket: string }).ticket;
      const code = appCode(s.secret, later);
      assert.ok(
        (await verifySecondFactor(db, {
          ticket,
          code,
          secret: SECRET,
          client,
          onEvent,
          now: later,
        })).ok,
      );
      // Throttled: five wrong codes, then the wait.
      for (let i = 0; i < 6; i++) {
        await verifySecondFactor(db, {
          ticket,
          code: "00000",
          secret: SECRET,
          client,
          onEvent,
          now: later,
        });
      }
      const session = { id: crypto.randomUUID(), issuedAt: Math.floor(later / 1000) };
      const reg = await passkeyRegistrationOptions(db, { userId: u.id, session, rp, now: later });
      assert.ok(reg.ok);
      const made = await create(reg.options, { origin: APP });
      const added = await verifyPasskeyRegistration(db, {
        userId: u.id,
        session,
        ceremony: reg.ceremony,
        response: made.json,
        rp,
        onEvent,
        now: later,
      });
      assert.ok(added.ok);
      const opts = await passkeySignInOptions(db, { rp, now: later });
      assert.ok(opts.ok);
      const answer = await get(opts.options, made.credential, { origin: APP });
      assert.ok(
        (await verifyPasskeySignIn(db, {
          ceremony: opts.ceremony,
          response: answer,
          rp,
          onEvent,
          now: later,
        })).ok,
      );
      assert.ok(
        (await removePasskey(db, {
          userId: u.id,
          passkeyId: added.passkey.id,
          session,
          onEvent,
          now: later,
        })).ok,
      );
      const c = await createUserSession(db, {
        session: SESSION,
        userId: u.id,
        record: { userAgent: "x" },
        now: later,
      });
      assert.ok(c.ok);
      const cookie = c.setCookie.split(";")[0];
      const out = await signOut(db, {
        session: SESSION,
        request: new Request(APP, { headers: { cookie } }),
        onEvent,
        now: later,
      });
      assert.ok(out.ok);
      const c2 = await createUserSession(db, {
        session: SESSION,
        userId: u.id,
        record: { userAgent: "y" },
        now: later,
      });
      assert.ok(c2.ok);
      const list = await listUserSessions(db, { userId: u.id, now: later });
      assert.ok(list.ok);
      assert.ok(
        (await endSession(db, {
          userId: u.id,
          sessionId: list.sessions[0].id,
          onEvent,
          now: later,
        })).ok,
      );
      assert.ok(
        (await changePassword(db, {
          userId: u.id,
          currentPassword: PASSWORD,
          newPassword: "another passphrase",
          iterations: ITER,
          onEvent,
          now: later,
        })).ok,
      );
      assert.deepEqual(
        got.map((
          e,
        ) => [
          e.type,
          e.detail.method ?? e.detail.factor ?? e.detail.scope ?? e.detail.error ?? "",
        ]),
        [
          ["sign_in.failed", "password"],
          ["sign_in.succeeded", "password"],
          ["factor.added", "totp"],
          ["sign_in.second_factor_required", "password"],
          ["sign_in.succeeded", "totp"],
          ["sign_in.failed", "invalid_code"],
          ["sign_in.failed", "invalid_code"],
          ["sign_in.failed", "invalid_code"],
          ["sign_in.failed", "invalid_code"],
          ["sign_in.failed", "invalid_code"],
          ["sign_in.throttled", "too_many_attempts"],
          ["factor.added", "passkey"],
          ["passkey.used", "passkey"],
          ["factor.removed", "passkey"],
          ["session.ended", "sign-out"],
          ["session.ended", "one"],
          ["password.changed", "change"],
        ],
      );
      for (const e of got) {
        assert.equal(e.userId, u.id, e.type);
        const text = JSON.stringify(e);
        for (const secret of [PASSWORD, ticket, code, s.secret, cookie]) {
          assert.ok(!text.includes(secret), e.type);
        }
      }
      assert.equal(got[0].client, client);
      assert.equal(got[0].email, u.email);
      assert.equal(got[0].at, T);
      const stored = await listAuthEvents(db, { userId: u.id, limit: 5 });
      assert.ok(stored.ok);
      assert.deepEqual(stored.events.map((e) => e.type), [
        "password.changed",
        "session.ended",
        "session.ended",
        "factor.removed",
        "passkey.used",
      ]);
      assert.ok(stored.next);
      const rest = await listAuthEvents(db, { userId: u.id, before: stored.next!, limit: 200 });
      assert.ok(rest.ok);
      assert.equal(rest.events.length, got.length - 5);
      assert.equal(rest.next, null);
      assert.deepEqual(rest.events.at(-1)?.detail, {
        method: "password",
        error: "invalid_credentials",
      });
    },
  },
  {
    name:
      "events: a throttled password, step-up, new backup codes, TOTP removed, other and all sessions ended, e-mail changed, password reset",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const got: AuthEvent[] = [];
      const onEvent = (e: AuthEvent) => void got.push(e);
      const client = `events-${crypto.randomUUID()}`;
      const who = { userId: u.id, iterations: ITER, secret: SECRET, onEvent };

      // Five wrong passwords from one client, then the throttle answers (no password checked).
      for (let i = 0; i < 6; i++) {
        await login(db, { ...who, email: u.email, password: `wrong ${i}`, client, now: T });
      }
      const throttled = await login(db, {
        ...who,
        email: u.email,
        password: PASSWORD,
        client,
        now: T,
      });
      assert.equal(throttled.ok === false && throttled.error, "too_many_attempts");

      const s = await startTotpEnrolment(db, {
        userId: u.id,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        issuer: "X",
        now: T,
      });
      assert.ok(s.ok);
      const first = await confirmTotpEnrolment(db, {
        userId: u.id,
        code: appCode(s.secret, T),
        secret: SECRET,
        now: T,
      });
      assert.ok(first.ok);
      const regenerated = await regenerateBackupCodes(db, { ...who, password: PASSWORD, now: T });
      assert.ok(regenerated.ok);

      // Three recorded sessions; a factor entered again in the first.
      const ids: string[] = [];
      for (const agent of ["a", "b", "c"]) {
        const c = await createUserSession(db, {
          session: SESSION,
          userId: u.id,
          record: { userAgent: agent },
          now: T,
        });
        assert.ok(c.ok);
      }
      const list = await listUserSessions(db, { userId: u.id, now: T });
      assert.ok(list.ok);
      for (const r of list.sessions) ids.push(r.id);
      const later = T + 30_000;
      const stepCode = appCode(s.secret, later);
      const stepped = await stepUp(db, {
        ...who,
        session: { id: ids[0] },
        code: stepCode,
        client,
        now: later,
      });
      assert.ok(stepped.ok, JSON.stringify(stepped));
      assert.ok((await removeTotp(db, { ...who, password: PASSWORD, now: later })).ok);
      const others = await endOtherSessions(db, { ...who, keepId: ids[0], now: later });
      assert.deepEqual(others, { ok: true, ended: 2 });
      assert.ok((await signOutEverywhere(db, { ...who, now: later })).ok);

      // The e-mail address changes through its link; then a reset link sets a new password.
      const box = outbox();
      const next = newEmail("events-new");
      assert.ok(
        (await requestEmailChange(db, {
          ...who,
          newEmail: next,
          password: PASSWORD,
          sendEmail: box.send,
          appUrl: APP,
          now: later,
        })).ok,
      );
      const changeToken = tokenIn(box.mails[0]);
      assert.ok(
        (await confirmEmailChange(db, { token: changeToken, secret: SECRET, onEvent, now: later }))
          .ok,
      );
      await requestPasswordReset(db, {
        email: next,
        secret: SECRET,
        sendEmail: box.send,
        appUrl: APP,
        now: later,
      });
      const resetToken = tokenIn(box.mails.at(-1));
      const newPassword = "a passphrase set by the reset link";
      assert.ok(
        (await resetPassword(db, {
          token: resetToken,
          newPassword,
          iterations: ITER,
          secret: SECRET,
          onEvent,
          now: later,
        })).ok,
      );

      const wrong = { method: "password", error: "invalid_credentials" };
      assert.deepEqual(got.map((e) => [e.type, e.detail]), [
        ["sign_in.failed", wrong],
        ["sign_in.failed", wrong],
        ["sign_in.failed", wrong],
        ["sign_in.failed", wrong],
        ["sign_in.failed", wrong],
        ["sign_in.throttled", { method: "password", error: "too_many_attempts" }],
        ["sign_in.throttled", { method: "password", error: "too_many_attempts" }],
        ["backup_codes.regenerated", { factor: "totp" }],
        ["step_up.succeeded", { method: "totp" }],
        ["factor.removed", { factor: "totp" }],
        ["session.ended", { scope: "others", count: 2 }],
        ["session.ended", { scope: "everywhere" }],
        ["email.changed", {}],
        ["password.changed", { method: "reset" }],
      ]);
      for (const e of got) {
        assert.equal(e.userId, u.id, e.type);
        const before = e.type.startsWith("sign_in.") || e.type === "backup_codes.regenerated";
        assert.equal(e.at, before ? T : later, e.type);
        const text = JSON.stringify(e);
        for (const secret of [PASSWORD, newPassword, stepCode, s.secret, changeToken, resetToken]) {
          assert.ok(!text.includes(secret), e.type);
        }
        for (const code of regenerated.backupCodes) assert.ok(!text.includes(code), e.type);
      }
      assert.equal(got[5].client, got[0].client, "the throttled try names its client");
      assert.ok(got[5].client);
      const changed = got.find((e) => e.type === "email.changed")!;
      assert.equal(changed.email, next, "email.changed carries the new address");
    },
  },
  {
    name:
      "events: a signup code and a provider sign-in report sign_in.* like a password, with their method",
    async fn({ db }) {
      const got: AuthEvent[] = [];
      const store = authEventStore(db);
      const onEvent = async (e: AuthEvent) => {
        got.push(e);
        await store(e);
      };
      const client = "198.51.100.23";
      const p = await pendingUser(db);
      const base = { email: p.email, attempt: p.attempt, secret: SECRET, client, onEvent };
      const wrong = p.code === "000000" ? "111111" : "000000";
      assert.equal((await verifyOtp(db, { ...base, code: wrong, now: T })).ok, false);
      const v = await verifyOtp(db, { ...base, code: p.code, now: T });
      assert.ok(v.ok);
      // Another signup's code guessed: five tries, then the code is spent.
      const q = await pendingUser(db);
      const guess = q.code === "000000" ? "111111" : "000000";
      for (let i = 0; i < 6; i++) {
        await verifyOtp(db, { ...base, email: q.email, attempt: q.attempt, code: guess, now: T });
      }
      const pending = await getUserByEmail(db, q.email);
      assert.ok(pending.ok);
      const qId = pending.user.id;
      // Malformed parameters are no sign-in: no event.
      assert.equal((await verifyOtp(db, { ...base, code: 7 as never, now: T })).ok, false);

      const email = newEmail("events-oauth");
      const oauth = { provider: "github", email, emailVerified: true, client, onEvent, now: T };
      const made = await findOrCreateOAuthUser(db, { ...oauth, providerUserId: 4242 });
      assert.ok(made.ok && made.created);
      assert.ok((await findOrCreateOAuthUser(db, { ...oauth, providerUserId: 4242 })).ok);
      // An unproven address of an existing account: refused, and the account hears of it.
      const unproven = await findOrCreateOAuthUser(db, {
        ...oauth,
        provider: "microsoft",
        providerUserId: "ms-1",
        email: p.email,
        emailVerified: false,
      });
      assert.deepEqual(unproven, { ok: false, error: "email_unverified" });
      assert.equal(
        (await findOrCreateOAuthUser(db, { ...oauth, provider: "Bad!", providerUserId: 1 })).ok,
        false,
      );

      const code = (error: string) => ({ method: "signup_code", error });
      assert.deepEqual(got.map((e) => [e.type, e.userId, e.email, e.detail]), [
        ["sign_in.failed", v.userId, p.email, code("invalid_code")],
        ["sign_in.succeeded", v.userId, p.email, { method: "signup_code" }],
        ...Array.from(
          { length: 5 },
          () => ["sign_in.failed", qId, q.email, code("invalid_code")],
        ),
        ["sign_in.throttled", qId, q.email, code("too_many_attempts")],
        ["sign_in.succeeded", made.userId, email, {
          method: "oauth",
          provider: "github",
          created: true,
        }],
        ["sign_in.succeeded", made.userId, email, {
          method: "oauth",
          provider: "github",
          created: false,
        }],
        ["sign_in.failed", v.userId, p.email, {
          method: "oauth",
          provider: "microsoft",
          error: "email_unverified",
        }],
      ]);
      for (const e of got) {
        assert.equal(e.client, client, e.type);
        assert.equal(e.at, T, e.type);
        const text = JSON.stringify(e);
        for (const secret of [p.code, q.code, p.attempt, q.attempt, PASSWORD]) {
          assert.ok(!text.includes(secret), e.type);
        }
      }
      const stored = await listAuthEvents(db, { userId: v.userId });
      assert.ok(stored.ok);
      assert.deepEqual(stored.events.map((e) => [e.type, e.detail.method]), [
        ["sign_in.failed", "oauth"],
        ["sign_in.succeeded", "signup_code"],
        ["sign_in.failed", "signup_code"],
      ]);
      assert.deepEqual(
        await verifyOtp(db, { ...base, code: p.code, client: 5 as never, now: T }),
        { ok: false, error: "invalid_input" },
        "a client that is not a string is refused",
      );
      assert.deepEqual(
        await findOrCreateOAuthUser(db, { ...oauth, providerUserId: 4242, onEvent: 1 as never }),
        { ok: false, error: "invalid_input" },
        "a sink that is not a function is refused",
      );
    },
  },
  {
    name: "events: a failing sink changes no answer; a sink that is not a function is refused",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const broken = () => {
        throw new Error("sink down");
      };
      const rejecting = () => Promise.reject(new Error("sink down"));
      for (const onEvent of [broken, rejecting]) {
        assert.deepEqual(
          await login(db, {
            email: u.email,
            password: PASSWORD,
            iterations: ITER,
            onEvent,
            now: T,
          }),
          {
            ok: true,
            userId: u.id,
          },
        );
      }
      assert.deepEqual(
        await login(db, {
          email: u.email,
          password: PASSWORD,
          iterations: ITER,
          onEvent: "yes" as never,
          now: T,
        }),
        { ok: false, error: "invalid_input" },
      );
    },
  },
];
