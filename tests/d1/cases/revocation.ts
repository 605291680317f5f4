/**
 * Ending one session everywhere: `signOut` for `/d1` users and `revocationStore` for the
 * core's sessions, on the table `revoked_sessions`; its cleanup, cookies made before session
 * ids, failures, and the migration that adds the table.
 */
import assert from "node:assert/strict";
import {
  applySchema,
  createUserSession,
  type D1Database,
  migrate,
  readUserSession,
  revocationStore,
  REVOKED_CLEANUP_BATCH,
  SCHEMA_SQL,
  signOut,
  signOutEverywhere,
  splitStatements,
} from "../../../d1.ts";
import {
  clearSessionCookie,
  createSessionCookie,
  readSession,
  revokeSession,
  signToken,
} from "../../../mod.ts";
import type { Case } from "../_backend.ts";
import { brokenDb } from "../_helpers.ts";
import { verifiedUser } from "./_user.ts";

const SESSION = { secret: "session secret of the revocation tests", cookieName: "__Host-s" };
const APP = "https://example.com";
const CLEARED = clearSessionCookie(SESSION);

const request = (cookie?: string) => new Request(APP, cookie ? { headers: { cookie } } : undefined);

async function cookieFor(db: D1Database, userId: string, now?: number): Promise<string> {
  const r = await createUserSession(db, { session: SESSION, userId, now });
  if (!r.ok) throw new Error(`createUserSession: ${r.error}`);
  return r.setCookie.split(";")[0];
}

async function who(db: D1Database, cookie: string, now?: number): Promise<string | null> {
  const me = await readUserSession(db, { session: SESSION, request: request(cookie), now });
  return me ? me.user.id : null;
}

async function idOf(cookie: string, now?: number): Promise<string> {
  const s = await readSession(SESSION, request(cookie), { now });
  if (!s) throw new Error("the cookie does not verify");
  return s.id;
}

async function rows(db: D1Database, id?: string): Promise<number> {
  const r = id === undefined
    ? await db.prepare("SELECT count(*) AS n FROM revoked_sessions").first<{ n: number }>()
    : await db.prepare("SELECT count(*) AS n FROM revoked_sessions WHERE id = ?").bind(id)
      .first<{ n: number }>();
  return Number(r?.n);
}

/** The schema before `revoked_sessions`: every statement of schema.sql but its own. */
const BEFORE_REVOCATION = splitStatements(SCHEMA_SQL).filter((s) => !s.includes("revoked_"));

export const revocationCases: Case[] = [
  {
    name:
      "sign-out: ends that session in every copy, remembered cookies included; the user's other sessions go on",
    async fn({ db }) {
      const u = await verifiedUser(db);
      const here = await cookieFor(db, u.id);
      const copy = here; // the same cookie in another browser (a copied or stolen one)
      const phone = await cookieFor(db, u.id); // the same user on another device
      for (let i = 0; i < 3; i++) assert.equal(await who(db, here), u.id);
      assert.equal(await who(db, phone), u.id);
      const before = await rows(db);

      const out = await signOut(db, { session: SESSION, request: request(here) });
      assert.deepEqual(out, { ok: true, setCookie: CLEARED, ended: true });
      assert.equal(await who(db, copy), null, "the copy of the signed-out cookie");
      assert.equal(await who(db, phone), u.id, "the other device stays signed in");
      // The cookie still verifies for the core alone: the table is what ends it.
      const id = await idOf(copy);
      assert.equal(await rows(db, id), 1);
      const kept = await db.prepare("SELECT expires_at FROM revoked_sessions WHERE id = ?")
        .bind(id).first<{ expires_at: number }>();
      const session = await readSession(SESSION, request(copy));
      assert.equal(kept?.expires_at, session!.expiresAt * 1000, "kept until the session expires");

      // Again, concurrently, without a cookie, with a forged one: one row, nothing else.
      const again = await Promise.all(
        Array.from({ length: 5 }, () => signOut(db, { session: SESSION, request: request(copy) })),
      );
      for (const r of again) assert.deepEqual(r, { ok: true, setCookie: CLEARED, ended: true });
      assert.deepEqual(await signOut(db, { session: SESSION, request: request() }), {
        ok: true,
        setCookie: CLEARED,
        ended: false,
      });
      const forged = (await createSessionCookie({ ...SESSION, secret: "not the site's" }, u.id))
        .split(";")[0];
      assert.deepEqual(await signOut(db, { session: SESSION, request: request(forged) }), {
        ok: true,
        setCookie: CLEARED,
        ended: false,
      });
      assert.equal(await rows(db), before + 1);

      // Signing in again is a new session; sign-out-everywhere still ends them all.
      const next = await cookieFor(db, u.id);
      assert.equal(await who(db, next), u.id);
      assert.deepEqual(await signOutEverywhere(db, { userId: u.id }), { ok: true });
      assert.equal(await who(db, next), null);
      assert.equal(await who(db, phone), null);
    },
  },
  {
    name:
      "sign-out: later sign-outs delete expired rows, 100 at a time; cookies from before session ids end one by one",
    async fn({ fresh }) {
      const db = await fresh();
      await applySchema(db);
      const now = Date.now();
      const expired = REVOKED_CLEANUP_BATCH + 50;
      const values = Array.from({ length: expired }, (_, i) => `('gone-${i}', ${now - 1000 - i})`);
      await db.prepare(`INSERT INTO revoked_sessions (id, expires_at) VALUES ${values}`).run();
      await db.prepare(`INSERT INTO revoked_sessions (id, expires_at) VALUES ('live', ?)`)
        .bind(now + 3_600_000).run();
      const u = await verifiedUser(db);
      const a = await cookieFor(db, u.id, now);
      const b = await cookieFor(db, u.id, now);
      assert.equal((await signOut(db, { session: SESSION, request: request(a), now })).ok, true);
      assert.equal(await rows(db), expired + 2 - REVOKED_CLEANUP_BATCH, "100 expired rows went");
      assert.equal((await signOut(db, { session: SESSION, request: request(b), now })).ok, true);
      assert.equal(await rows(db), 3, "the rest went; live ones stay");
      assert.equal(await rows(db, "live"), 1);

      // A cookie as createUserSession made it before session ids: [user id, stamp].
      const stamp = await db.prepare("SELECT stamp FROM users WHERE id = ?").bind(u.id)
        .first<{ stamp: string }>();
      const old = async (at: number) =>
        `${SESSION.cookieName}=${await signToken(SESSION.secret, {
          purpose: `session:${SESSION.cookieName}`,
          payload: [u.id, stamp!.stamp],
          ttlSeconds: 604_800,
          now: at,
        })}`;
      const old1 = await old(now - 5000);
      const old2 = await old(now - 9000);
      assert.equal(await who(db, old1), u.id, "older cookies stay readable");
      assert.equal(await who(db, old2), u.id);
      const out = await signOut(db, { session: SESSION, request: request(old1) });
      assert.equal(out.ok && out.ended, true);
      assert.equal(await who(db, old1), null);
      assert.equal(await who(db, old2), u.id, "another older cookie goes on");
    },
  },
  {
    name:
      "revocationStore: the core's revokeSession and readSession on the site's database (core sessions)",
    async fn({ db }) {
      const store = revocationStore(db);
      const owner = { secret: "owner site secret of the tests", cookieName: "__Host-owner" };
      const make = async () =>
        (await createSessionCookie(owner, "owner@example.com", { generation: "g1" })).split(";")[0];
      const laptop = await make();
      const phone = await make();
      const read = (cookie: string) =>
        readSession(owner, request(cookie), { generation: "g1", revoked: store });
      assert.equal((await read(laptop))?.subject, "owner@example.com");
      const ended = await revokeSession(owner, request(laptop), store);
      assert.equal(ended?.subject, "owner@example.com");
      assert.equal(await read(laptop), null);
      assert.equal((await read(phone))?.subject, "owner@example.com");
      assert.equal(await rows(db, ended!.id), 1);
      assert.equal(await store.isRevoked(ended!.id, ended!), true);
      assert.equal(await store.isRevoked("never-ended", ended!), false);
      await store.revoke(ended!.id, ended!.expiresAt); // twice: harmless
      assert.equal(await rows(db, ended!.id), 1);
      for (const [id, exp] of [["", 1], ["x".repeat(257), 1], [7, 1], ["id", NaN]] as const) {
        await assert.rejects(
          async () => await store.revoke(id as string, exp),
          TypeError,
        );
      }

      // A failing database: the cookie is refused, and a sign-out says it failed.
      const down = revocationStore(brokenDb as unknown as D1Database);
      assert.equal(
        await readSession(owner, request(phone), { revoked: down }),
        null,
      );
      await assert.rejects(revokeSession(owner, request(phone), down), /db_error/);
    },
  },
  {
    name:
      "sign-out: bad input and a failing database are codes; migrate adds revoked_sessions and earlier cookies keep working",
    async fn({ db, fresh }) {
      const u = await verifiedUser(db);
      const c = await cookieFor(db, u.id);
      const code = async (d: unknown, p: unknown) => {
        const r = await signOut(d as D1Database, p as never);
        return r.ok ? "ok" : r.error;
      };
      assert.equal(await code(db, null), "invalid_input");
      assert.equal(await code(db, { session: SESSION }), "invalid_input");
      assert.equal(
        await code(db, { session: SESSION, request: { headers: null } }),
        "invalid_input",
      );
      assert.equal(
        await code(db, { session: { ...SESSION, cookieName: "a b" }, request: request(c) }),
        "invalid_input",
      );
      assert.equal(await code(brokenDb, { session: SESSION, request: request(c) }), "db_error");
      assert.equal(await who(db, c), u.id, "a failed sign-out ended nothing");
      // No cookie: nothing to record, the database is not needed.
      assert.equal(await code(brokenDb, { session: SESSION, request: request() }), "ok");

      // A database of the version before: no revoked_sessions.
      const old = await fresh();
      for (const s of BEFORE_REVOCATION) await old.prepare(s).run();
      const v = await verifiedUser(old);
      const before = await cookieFor(old, v.id);
      assert.equal(
        await who(old, before),
        null,
        "without the table no session reads (run migrate)",
      );
      assert.equal(await code(old, { session: SESSION, request: request(before) }), "db_error");
      assert.deepEqual(await migrate(old), []);
      assert.deepEqual(await migrate(old), []);
      assert.equal(await who(old, before), v.id, "the cookie made before the migration works");
      assert.equal(await code(old, { session: SESSION, request: request(before) }), "ok");
      assert.equal(await who(old, before), null);
    },
  },
];
