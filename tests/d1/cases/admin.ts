/**
 * The operator's functions: listing and searching users page by page, granting and
 * withdrawing administration (never the last), deleting with removeUser's effects, resending
 * a signup code, and the audit log.
 */
import assert from "node:assert/strict";
import {
  adminRemoveUser,
  applyAuditSchema,
  applySchema,
  applyUserListIndexes,
  changeName,
  createUserSession,
  type D1Database,
  findOrCreateOAuthUser,
  getUser,
  getUserByEmail,
  listAudit,
  listUsers,
  readUserSession,
  recordAudit,
  resendVerification,
  reserveAudit,
  setAdmin,
  UNFINISHED_AUDIT_ACTION,
  verifyOtp,
  withdrawAudit,
} from "../../../d1.ts";
import type { Case } from "../_backend.ts";
import { codeIn, outbox, SECRET } from "../_helpers.ts";
import { pendingUser, verifiedUser } from "./_user.ts";

async function prepared(fresh: () => Promise<D1Database>): Promise<D1Database> {
  const db = await fresh();
  await applySchema(db);
  await applyUserListIndexes(db);
  await applyAuditSchema(db);
  return db;
}

const SESSION = { secret: "session secret of the admin tests", cookieName: "__Host-a" };

async function signedIn(db: D1Database, userId: string): Promise<Request> {
  const s = await createUserSession(db, { session: SESSION, userId });
  if (!s.ok) throw new Error(s.error);
  return new Request("https://example.com/", { headers: { cookie: s.setCookie.split(";")[0] } });
}

/**
 * Two administrators deleting or demoting each other at once, in every pairing: exactly one
 * change goes through, the other is refused with `last_admin` and changes nothing, and one
 * administrator is left. The last-administrator check is in the write itself.
 */
async function raceForTheLastAdmin(db: D1Database): Promise<void> {
  const box = outbox();
  const remove = (id: string) => adminRemoveUser(db, { userId: id, sendEmail: box.send });
  const demote = (id: string) => setAdmin(db, { userId: id, admin: false });
  const admins = async () => {
    const r = await listUsers(db, { adminsOnly: true });
    assert.ok(r.ok);
    return r.users.map((u) => u.id);
  };
  // Each round starts with exactly two administrators, a and b, and nobody else.
  const rounds: [string, (a: string, b: string) => Promise<{ ok: boolean }>[]][] = [
    ["delete and delete", (a, b) => [remove(a), remove(b)]],
    ["delete and demote", (a, b) => [remove(a), demote(b)]],
    ["demote and delete", (a, b) => [demote(a), remove(b)]],
    ["demote and demote", (a, b) => [demote(a), demote(b)]],
  ];
  for (const [label, race] of rounds) {
    for (const id of await admins()) {
      assert.ok((await setAdmin(db, { userId: id, admin: false, keepOne: false })).ok);
    }
    const a = await verifiedUser(db);
    const b = await verifiedUser(db);
    assert.ok((await setAdmin(db, { userId: a.id, admin: true })).ok);
    assert.ok((await setAdmin(db, { userId: b.id, admin: true })).ok);
    const sent = box.mails.length;
    const results = await Promise.all(race(a.id, b.id));
    assert.deepEqual(results.map((r) => r.ok).sort(), [false, true], label);
    const refused = results.find((r) => !r.ok);
    assert.deepEqual(refused, { ok: false, error: "last_admin" }, label);
    const left = await admins();
    assert.equal(left.length, 1, `${label}: one administrator left`);
    // The refused one is untouched: still there, still an administrator.
    const kept = results[0].ok ? b : a;
    assert.deepEqual(left, [kept.id], label);
    assert.ok((await getUserByEmail(db, kept.email)).ok, label);
    // Only a deleted account was told.
    const deleted: string[] = [];
    for (const u of [a, b]) if (!(await getUserByEmail(db, u.email)).ok) deleted.push(u.email);
    assert.deepEqual(box.mails.slice(sent).map((m) => m.to), deleted, label);
  }
  // A refused deletion deletes nothing of the account: its linked sign-in stays too.
  const only = (await admins())[0];
  const found = await getUser(db, only);
  assert.ok(found.ok);
  const email = found.user.email;
  const linked = await findOrCreateOAuthUser(db, {
    provider: "github",
    providerUserId: "gh-last-admin",
    email,
    emailVerified: true,
  });
  assert.ok(linked.ok && linked.userId === only);
  assert.deepEqual(await remove(only), { ok: false, error: "last_admin" });
  const again = await findOrCreateOAuthUser(db, {
    provider: "github",
    providerUserId: "gh-last-admin",
    email,
    emailVerified: true,
  });
  assert.ok(again.ok && !again.created && again.userId === only);
}

export const adminCases: Case[] = [
  {
    name: "admin: listUsers pages forwards and backwards in e-mail order, searches e-mail and name",
    async fn({ fresh }) {
      const db = await prepared(fresh);
      const made: { id: string; email: string }[] = [];
      for (let i = 0; i < 7; i++) made.push(await verifiedUser(db));
      const named = made[3];
      assert.ok((await changeName(db, { userId: named.id, name: "Zelda Quist" })).ok);
      const all = made.map((u) => u.email).sort();

      const p1 = await listUsers(db, { limit: 3 });
      assert.ok(p1.ok);
      assert.equal(p1.total, 7);
      assert.deepEqual(p1.users.map((u) => u.email), all.slice(0, 3));
      assert.equal(p1.previous, null);
      assert.ok(p1.next);
      const p2 = await listUsers(db, { limit: 3, after: p1.next });
      assert.ok(p2.ok);
      assert.deepEqual(p2.users.map((u) => u.email), all.slice(3, 6));
      const p3 = await listUsers(db, { limit: 3, after: p2.next! });
      assert.ok(p3.ok);
      assert.deepEqual(p3.users.map((u) => u.email), all.slice(6));
      assert.equal(p3.next, null);
      // Back from the last page: the middle page again, then the first.
      const back = await listUsers(db, { limit: 3, before: p3.previous! });
      assert.ok(back.ok);
      assert.deepEqual(back.users.map((u) => u.email), all.slice(3, 6));
      const first = await listUsers(db, { limit: 3, before: back.previous! });
      assert.ok(first.ok);
      assert.deepEqual(first.users.map((u) => u.email), all.slice(0, 3));
      assert.equal(first.previous, null);

      // Search: the start of the e-mail (any case) or of the name; nothing in the middle.
      const byEmail = await listUsers(db, { search: named.email.slice(0, 12).toUpperCase() });
      assert.ok(byEmail.ok);
      assert.deepEqual(byEmail.users.map((u) => u.id), [named.id]);
      assert.equal(byEmail.total, 1);
      const byName = await listUsers(db, { search: "  zel " });
      assert.ok(byName.ok);
      assert.deepEqual(byName.users.map((u) => [u.id, u.name]), [[named.id, "Zelda Quist"]]);
      const middle = await listUsers(db, { search: "Quist" });
      assert.ok(middle.ok);
      assert.equal(middle.total, 0);
      assert.deepEqual(middle.users, []);

      assert.ok((await setAdmin(db, { userId: made[5].id, admin: true })).ok);
      const admins = await listUsers(db, { adminsOnly: true });
      assert.ok(admins.ok);
      assert.deepEqual(admins.users.map((u) => [u.id, u.isAdmin]), [[made[5].id, true]]);

      for (
        const bad of [
          { limit: 0 },
          { limit: 201 },
          { after: "%%%" },
          { after: "", before: "" },
          { after: "YQ", before: "YQ" },
          { search: "x".repeat(255) },
          { adminsOnly: "yes" },
        ]
      ) {
        const r = await listUsers(db, bad as never);
        assert.deepEqual(r, { ok: false, error: "invalid_input" }, JSON.stringify(bad));
      }
      const found = await getUserByEmail(db, named.email.toUpperCase());
      assert.ok(found.ok);
      assert.equal(found.user.id, named.id);
      assert.deepEqual(await getUserByEmail(db, "nobody@example.com"), {
        ok: false,
        error: "not_found",
      });
    },
  },
  {
    name:
      "admin: setAdmin grants and withdraws, never the last administrator's right, even in a race with a deletion",
    async fn({ fresh }) {
      const db = await prepared(fresh);
      const a = await verifiedUser(db);
      const b = await verifiedUser(db);
      const up = await setAdmin(db, { userId: a.id, admin: true });
      assert.ok(up.ok && up.changed && up.user.isAdmin);
      const again = await setAdmin(db, { userId: a.id, admin: true });
      assert.ok(again.ok && !again.changed);
      // a is the only administrator: withdrawing is refused and nothing changes.
      assert.deepEqual(await setAdmin(db, { userId: a.id, admin: false }), {
        ok: false,
        error: "last_admin",
      });
      const still = await getUserByEmail(db, a.email);
      assert.ok(still.ok && still.user.isAdmin);
      // With a second one, either may go; withdrawing from a non-admin is a repeat.
      assert.ok((await setAdmin(db, { userId: b.id, admin: true })).ok);
      const down = await setAdmin(db, { userId: a.id, admin: false });
      assert.ok(down.ok && down.changed && !down.user.isAdmin);
      const repeat = await setAdmin(db, { userId: a.id, admin: false });
      assert.ok(repeat.ok && !repeat.changed);
      // keepOne: false lets the last one go (a site whose owners come from an allowlist).
      const last = await setAdmin(db, { userId: b.id, admin: false, keepOne: false });
      assert.ok(last.ok && last.changed);
      assert.deepEqual(await setAdmin(db, { userId: "nobody", admin: true }), {
        ok: false,
        error: "not_found",
      });
      assert.deepEqual(await setAdmin(db, { userId: a.id, admin: "yes" } as never), {
        ok: false,
        error: "invalid_input",
      });
      // Two administrators withdrawing each other at once: one stays.
      assert.ok((await setAdmin(db, { userId: a.id, admin: true })).ok);
      assert.ok((await setAdmin(db, { userId: b.id, admin: true })).ok);
      const both = await Promise.all([
        setAdmin(db, { userId: a.id, admin: false }),
        setAdmin(db, { userId: b.id, admin: false }),
      ]);
      assert.deepEqual(both.map((r) => r.ok).sort(), [false, true]);
      const left = await listUsers(db, { adminsOnly: true });
      assert.ok(left.ok);
      assert.equal(left.total, 1);
      // The same with deletions (adminRemoveUser) in every pairing.
      await raceForTheLastAdmin(db);
    },
  },
  {
    name: "admin: adminRemoveUser has removeUser's effects; the last administrator stays",
    async fn({ fresh }) {
      const db = await prepared(fresh);
      const u = await verifiedUser(db);
      const linked = await findOrCreateOAuthUser(db, {
        provider: "github",
        providerUserId: "gh-42",
        email: u.email,
        emailVerified: true,
      });
      assert.ok(linked.ok && linked.userId === u.id);
      const request = await signedIn(db, u.id);
      assert.ok(await readUserSession(db, { session: SESSION, request }));
      const box = outbox();
      const removed = await adminRemoveUser(db, { userId: u.id, sendEmail: box.send });
      assert.ok(removed.ok);
      assert.equal(removed.user.email, u.email);
      assert.equal(removed.notified, true);
      assert.match(box.to(u.email)[0].subject, /deleted/i);
      assert.equal(await readUserSession(db, { session: SESSION, request }), null);
      assert.deepEqual(await getUserByEmail(db, u.email), { ok: false, error: "not_found" });
      // The OAuth identity went with it: the same provider account makes a new user.
      const again = await findOrCreateOAuthUser(db, {
        provider: "github",
        providerUserId: "gh-42",
        email: u.email,
        emailVerified: true,
      });
      assert.ok(again.ok && again.created && again.userId !== u.id);

      const admin = await verifiedUser(db);
      assert.ok((await setAdmin(db, { userId: admin.id, admin: true })).ok);
      assert.deepEqual(await adminRemoveUser(db, { userId: admin.id, sendEmail: box.send }), {
        ok: false,
        error: "last_admin",
      });
      assert.ok((await getUserByEmail(db, admin.email)).ok, "still there");
      assert.deepEqual(await adminRemoveUser(db, { userId: u.id, sendEmail: box.send }), {
        ok: false,
        error: "not_found",
      });
      const failing = await adminRemoveUser(db, {
        userId: again.ok ? again.userId : "",
        sendEmail: () => Promise.reject(new Error("smtp down")),
      });
      assert.ok(failing.ok && failing.notified === false);
    },
  },
  {
    name: "admin: resendVerification e-mails a code that verifies only with the signup's attempt",
    async fn({ db }) {
      const p = await pendingUser(db);
      const found = await getUserByEmail(db, p.email);
      assert.ok(found.ok);
      const box = outbox();
      const now = Date.now();
      // Inside the resend throttle: refused with the seconds to wait, nothing sent.
      const early = await resendVerification(db, {
        userId: found.user.id,
        secret: SECRET,
        sendEmail: box.send,
        now,
      });
      assert.equal(early.ok, false);
      assert.ok(!early.ok && early.error === "too_many_attempts" && early.retryAfter! > 0);
      assert.equal(box.mails.length, 0);
      const later = await resendVerification(db, {
        userId: found.user.id,
        secret: SECRET,
        sendEmail: box.send,
        now: now + 61_000,
      });
      assert.ok(later.ok);
      const code = codeIn(box.to(p.email)[0]);
      // The old code is void; the new one needs the attempt of the browser that signed up.
      assert.ok(!(await verifyOtp(db, { email: p.email, code, attempt: "x", secret: SECRET })).ok);
      const v = await verifyOtp(db, {
        email: p.email,
        code,
        attempt: p.attempt,
        secret: SECRET,
        now: now + 62_000,
      });
      assert.ok(v.ok, JSON.stringify(v));
      assert.deepEqual(
        await resendVerification(db, { userId: v.userId, secret: SECRET, sendEmail: box.send }),
        { ok: false, error: "already_verified" },
      );
      assert.deepEqual(
        await resendVerification(db, { userId: "nobody", secret: SECRET, sendEmail: box.send }),
        { ok: false, error: "not_found" },
      );
    },
  },
  {
    name: "admin: the audit log keeps who, what, when, before and after; filters combine",
    async fn({ fresh }) {
      const db = await prepared(fresh);
      const t0 = 1_700_000_000_000;
      const base = { actorId: "u1", actorEmail: "Admin@Example.com" };
      for (let i = 0; i < 5; i++) {
        const r = await recordAudit(db, {
          ...base,
          action: i % 2 ? "user.promote" : "relay.register",
          target: `user:${i}`,
          before: { isAdmin: false },
          after: { isAdmin: true, i },
          now: t0 + i,
        });
        assert.ok(r.ok);
      }
      await recordAudit(db, {
        actorId: null,
        actorEmail: "ops@example.com",
        action: "server.config.patch",
        target: "server:/config/apps",
      });
      const page = await listAudit(db, { limit: 4 });
      assert.ok(page.ok);
      assert.deepEqual(page.entries.map((e) => e.action), [
        "server.config.patch",
        "relay.register",
        "user.promote",
        "relay.register",
      ]);
      assert.deepEqual(page.entries[0].before, null);
      assert.deepEqual(page.entries[1].after, { isAdmin: true, i: 4 });
      assert.equal(page.entries[1].at, t0 + 4);
      assert.equal(page.entries[1].actorEmail, "Admin@Example.com");
      const rest = await listAudit(db, { limit: 4, before: page.next! });
      assert.ok(rest.ok);
      assert.equal(rest.entries.length, 2);
      assert.equal(rest.next, null);
      const users = await listAudit(db, { action: "user.", actor: "admin@" });
      assert.ok(users.ok);
      assert.deepEqual(users.entries.map((e) => e.target), ["user:3", "user:1"]);
      const one = await listAudit(db, { target: "user:3" });
      assert.ok(one.ok && one.entries.length === 1);
      for (
        const bad of [
          { ...base, action: "Bad Action", target: "x" },
          { ...base, action: "a", target: "" },
          { ...base, actorEmail: " ", action: "a", target: "x" },
          { ...base, action: "a", target: "x", after: "y".repeat(70_000) },
          { ...base, action: "a", target: "x", after: 10n },
        ]
      ) {
        assert.deepEqual(await recordAudit(db, bad as never), {
          ok: false,
          error: "invalid_input",
        });
      }
      assert.deepEqual(await listAudit(db, { limit: 500 }), { ok: false, error: "invalid_input" });

      // Two steps for a change made elsewhere: reserved before, filled in after (same id).
      const who = { actorId: "u1", actorEmail: "admin@example.com" };
      const reserved = await reserveAudit(db, { ...who, target: "POST /admin/relay/x/rotate" });
      assert.ok(reserved.ok);
      const pending = await listAudit(db, { limit: 1 });
      assert.ok(pending.ok);
      assert.deepEqual(
        [pending.entries[0].id, pending.entries[0].action, pending.entries[0].target],
        [reserved.id, UNFINISHED_AUDIT_ACTION, "POST /admin/relay/x/rotate"],
      );
      const filled = await recordAudit(db, {
        ...who,
        action: "relay.rotate_secret",
        target: "relay:x",
        after: { rotated: true },
        reservation: reserved.id,
      });
      assert.deepEqual(filled, { ok: true, id: reserved.id });
      const done = await listAudit(db, { target: "relay:x" });
      assert.ok(done.ok);
      assert.deepEqual(done.entries.map((e) => [e.id, e.action, e.after]), [
        [reserved.id, "relay.rotate_secret", { rotated: true }],
      ]);
      const none = await listAudit(db, { action: UNFINISHED_AUDIT_ACTION });
      assert.ok(none.ok && none.entries.length === 0);
      // A filled entry is never filled again nor withdrawn: a second entry is added instead.
      const again = await recordAudit(db, {
        ...who,
        action: "relay.rotate_secret",
        target: "relay:x",
        reservation: reserved.id,
      });
      assert.ok(again.ok && again.id > reserved.id);
      assert.deepEqual(await withdrawAudit(db, reserved.id), { ok: true, withdrawn: false });
      // Nothing changed after all: the reservation goes.
      const spare = await reserveAudit(db, { ...who, target: "POST /admin/relay/y" });
      assert.ok(spare.ok);
      assert.deepEqual(await withdrawAudit(db, spare.id), { ok: true, withdrawn: true });
      const gone = await listAudit(db, { target: "POST /admin/relay/y" });
      assert.ok(gone.ok && gone.entries.length === 0);
      for (const bad of [0, -1, 1.5, "3"]) {
        assert.deepEqual(await withdrawAudit(db, bad as never), {
          ok: false,
          error: "invalid_input",
        });
        assert.deepEqual(
          await recordAudit(db, { ...who, action: "a", target: "x", reservation: bad as never }),
          { ok: false, error: "invalid_input" },
        );
      }
      assert.deepEqual(await reserveAudit(db, { ...who, target: "" }), {
        ok: false,
        error: "invalid_input",
      });
    },
  },
];
