import assert from "node:assert/strict";
import {
  applySchema,
  confirmTotpEnrolment,
  type D1Database,
  login,
  migrate,
  passkeyRegistrationOptions,
  passkeySignInOptions,
  signup,
  splitStatements,
  startTotpEnrolment,
  verifyOtp,
  verifyPasskeyRegistration,
  verifyPasskeySignIn,
  verifySecondFactor,
} from "../../../d1.ts";
import { hashPassword } from "../../../mod.ts";
import type { Case } from "../_backend.ts";
import { codeIn, ITER, newEmail, outbox, PASSWORD, SECRET } from "../_helpers.ts";
import { create, get } from "../_authenticator.ts";
import { appCode } from "../_totp.ts";

/** The `users` table as created before 0.2.0 (no `name`, no `is_admin`). */
const OLD_USERS = `CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL COLLATE NOCASE,
  password_hash TEXT,
  email_verified INTEGER NOT NULL DEFAULT 0,
  stamp TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
)`;

/** The whole schema of 0.2.0: no `auth_throttle`. */
const V020_SCHEMA = [
  `CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT NOT NULL COLLATE NOCASE,
   password_hash TEXT, email_verified INTEGER NOT NULL DEFAULT 0, stamp TEXT NOT NULL,
   created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, name TEXT,
   is_admin INTEGER NOT NULL DEFAULT 0)`,
  "CREATE UNIQUE INDEX users_email_unique ON users (email COLLATE NOCASE)",
  `CREATE TABLE oauth_identities (provider TEXT NOT NULL, provider_user_id TEXT NOT NULL,
   user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE, email TEXT,
   created_at INTEGER NOT NULL, PRIMARY KEY (provider, provider_user_id))`,
  `CREATE TABLE otp_codes (email TEXT NOT NULL COLLATE NOCASE, purpose TEXT NOT NULL,
   code_hash TEXT NOT NULL, password_hash TEXT, attempts INTEGER NOT NULL DEFAULT 0,
   sent_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (email, purpose))`,
];

/**
 * `schema.sql` as 0.2.0 shipped it, the last before 0.3.0 (from git: `git show
 * 4ebc7c5^1:schema.sql`): users, oauth_identities, otp_codes, auth_throttle, revoked_sessions.
 */
const V020_SCHEMA_FILE = await Deno.readTextFile(
  new URL("../fixtures/schema-0.2.0.sql", import.meta.url),
);

/** The tables 0.3.0 adds. */
export const V030_TABLES = [
  "auth_events",
  "backup_codes",
  "passkey_challenges",
  "passkeys",
  "totp_factors",
  "trusted_devices",
  "user_sessions",
];

/** Every table and index with its SQL (the database's own ones left out: D1's `_cf_*`). */
async function objects(db: D1Database): Promise<string[]> {
  const r = await db.prepare(
    `SELECT type, name, sql FROM sqlite_master
     WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '\_cf\_%' ESCAPE '\\' ORDER BY type, name`,
  ).all<{ type: string; name: string; sql: string | null }>();
  return r.results.map((o) => `${o.type} ${o.name}: ${o.sql}`);
}

async function tables(db: D1Database): Promise<string[]> {
  const r = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all<{ name: string }>();
  return r.results.map((t) => t.name);
}

async function columns(db: D1Database, table: string): Promise<string[]> {
  const r = await db.prepare(`PRAGMA table_info(${table})`).all<{ name: string }>();
  return r.results.map((c) => c.name);
}

export const schemaCases: Case[] = [
  {
    name: "schema: applying twice is safe; tables, columns and a case-insensitive unique e-mail",
    async fn({ fresh }) {
      const db = await fresh();
      await applySchema(db);
      await applySchema(db);
      const users = await columns(db, "users");
      for (const c of ["id", "email", "password_hash", "name", "is_admin"]) {
        assert.ok(users.includes(c), c);
      }
      assert.ok((await columns(db, "oauth_identities")).includes("provider_user_id"));
      assert.ok((await columns(db, "otp_codes")).includes("code_hash"));
      assert.deepEqual(await columns(db, "revoked_sessions"), ["id", "expires_at"]);
      const insert = (email: string) =>
        db.prepare(
          "INSERT INTO users (id, email, stamp, created_at, updated_at) VALUES (?, ?, 's', 0, 0)",
        )
          .bind(crypto.randomUUID(), email).run();
      await insert("Ada@Example.com");
      await assert.rejects(insert("ada@EXAMPLE.COM"), /UNIQUE/);
      const row = await db.prepare("SELECT is_admin, name FROM users").first<
        { is_admin: number; name: null }
      >();
      assert.deepEqual(row, { is_admin: 0, name: null });
    },
  },
  {
    name: "migrate: a pre-0.2.0 database gains name and is_admin, once; flows then work",
    async fn({ fresh }) {
      const db = await fresh();
      await db.prepare(OLD_USERS).run();
      await db.prepare(
        "INSERT INTO users (id, email, stamp, created_at, updated_at) VALUES ('u1', 'old@example.com', 's', 1, 1)",
      ).run();
      assert.ok(!(await columns(db, "users")).includes("is_admin"));
      assert.deepEqual(await migrate(db), ["name", "is_admin"]);
      assert.deepEqual(await migrate(db), []);
      assert.deepEqual(await migrate(db), []);
      const cols = await columns(db, "users");
      assert.ok(cols.includes("name") && cols.includes("is_admin"));
      const old = await db.prepare("SELECT email, name, is_admin FROM users WHERE id = 'u1'")
        .first();
      assert.deepEqual(old, { email: "old@example.com", name: null, is_admin: 0 });
      const box = outbox();
      const email = newEmail();
      const s = await signup(db, {
        email,
        password: PASSWORD,
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
      });
      assert.ok(s.ok);
      const code = codeIn(box.mails[0]);
      assert.equal(
        (await verifyOtp(db, { email, code, attempt: s.attempt, secret: SECRET })).ok,
        true,
      );
      assert.equal((await login(db, { email, password: PASSWORD, iterations: ITER })).ok, true);
    },
  },
  {
    name: "migrate: adds only what is missing; on an empty database creates the schema",
    async fn({ fresh }) {
      const half = await fresh();
      await half.prepare(OLD_USERS).run();
      await half.prepare("ALTER TABLE users ADD COLUMN is_admin INTEGER NOT NULL DEFAULT 0").run();
      assert.deepEqual(await migrate(half), ["name"]);
      const empty = await fresh();
      assert.deepEqual(await migrate(empty), []);
      assert.ok((await columns(empty, "users")).includes("is_admin"));
    },
  },
  {
    name:
      "migrate: a 0.2.0 database gains auth_throttle; its users sign in; a pending 0.2.0 signup signs up again",
    async fn({ fresh }) {
      const db = await fresh();
      for (const sql of V020_SCHEMA) await db.prepare(sql).run();
      const verified = newEmail("v020");
      const pending = newEmail("v020-pending");
      const hash = await hashPassword(PASSWORD, { iterations: ITER });
      await db.prepare(
        `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at)
         VALUES ('a', ?, ?, 1, 's', 1, 1), ('b', ?, ?, 0, 's', 1, 1)`,
      ).bind(verified, hash, pending, hash).run();
      await db.prepare(
        `INSERT INTO otp_codes (email, purpose, code_hash, password_hash, attempts, sent_at, expires_at)
         VALUES (?, 'signup', ?, ?, 0, 1, 9999999999999)`,
      ).bind(pending, "0".repeat(64), hash).run();
      assert.ok(!(await tables(db)).includes("auth_throttle"));
      assert.deepEqual(await migrate(db), []);
      assert.ok((await tables(db)).includes("auth_throttle"));
      assert.deepEqual(await migrate(db), []);
      assert.equal(
        (await login(db, { email: verified, password: PASSWORD, iterations: ITER })).ok,
        true,
      );
      // The pending signup of 0.2.0 confirms through a new signup (its old code is unbound).
      const box = outbox();
      const s = await signup(db, {
        email: pending,
        password: "the pending user's new passphrase",
        secret: SECRET,
        sendEmail: box.send,
        iterations: ITER,
      });
      assert.ok(s.ok);
      const code = codeIn(box.mails[0]);
      assert.equal(
        (await verifyOtp(db, { email: pending, code, attempt: s.attempt, secret: SECRET })).ok,
        true,
      );
      assert.equal(
        (await login(db, {
          email: pending,
          password: "the pending user's new passphrase",
          iterations: ITER,
        })).ok,
        true,
      );
    },
  },
  {
    name:
      "migrate: a 0.2.0 database (its schema.sql) gains the 0.3.0 tables, once; TOTP and passkeys then work on it",
    async fn({ fresh }) {
      const db = await fresh();
      for (const sql of splitStatements(V020_SCHEMA_FILE)) await db.prepare(sql).run();
      const email = newEmail("v020-factors");
      const hash = await hashPassword(PASSWORD, { iterations: ITER });
      await db.prepare(
        `INSERT INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at)
         VALUES ('v020-user', ?, ?, 1, 's', 1, 1)`,
      ).bind(email, hash).run();
      const before = await tables(db);
      for (const t of V030_TABLES) assert.ok(!before.includes(t), t);

      assert.deepEqual(await migrate(db), [], "no column changes");
      const after = await tables(db);
      assert.deepEqual(
        after.filter((t) => !before.includes(t) && !t.startsWith("sqlite_")),
        V030_TABLES,
        "exactly the tables of 0.3.0 are new",
      );
      const migrated = await objects(db);
      // The same tables and indexes as a database set up by this version.
      const setUp = await fresh();
      await applySchema(setUp);
      assert.deepEqual(
        migrated.map((o) => o.split(":")[0]),
        (await objects(setUp)).map((o) => o.split(":")[0]),
      );
      // A second run changes nothing: the same objects, the same rows.
      assert.deepEqual(await migrate(db), []);
      assert.deepEqual(await objects(db), migrated);
      const users = await db.prepare("SELECT id, email, password_hash FROM users").all();
      assert.deepEqual(users.results, [{ id: "v020-user", email, password_hash: hash }]);

      // TOTP: enrol, then the password asks for the code, and the code signs in.
      const T = Date.UTC(2026, 5, 1, 12, 0, 15);
      const s = await startTotpEnrolment(db, {
        userId: "v020-user",
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        issuer: "Gatehouse tests",
        now: T,
      });
      assert.ok(s.ok, JSON.stringify(s));
      const c = await confirmTotpEnrolment(db, {
        userId: "v020-user",
        code: appCode(s.secret, T),
        secret: SECRET,
        now: T,
      });
      assert.ok(c.ok, JSON.stringify(c));
      const later = T + 30_000;
      const l = await login(db, {
        email,
        password: PASSWORD,
        iterations: ITER,
        secret: SECRET,
        now: later,
      });
      assert.ok(!l.ok && l.error === "second_factor_required" && "ticket" in l, JSON.stringify(l));
      const second = await verifySecondFactor(db, {
        ticket: l.ticket!,
        code: appCode(s.secret, later),
        secret: SECRET,
        now: later,
      });
      assert.ok(second.ok && second.userId === "v020-user", JSON.stringify(second));

      // Passkeys: add one, then sign in with it (no e-mail, no TOTP step).
      const origin = "https://example.com";
      const rp = { id: "example.com", name: "Example", origin };
      const session = { id: crypto.randomUUID(), issuedAt: Math.floor(later / 1000) };
      const reg = await passkeyRegistrationOptions(db, {
        userId: "v020-user",
        session,
        rp,
        now: later,
      });
      assert.ok(reg.ok, JSON.stringify(reg));
      const made = await create(reg.options, { origin });
      const added = await verifyPasskeyRegistration(db, {
        userId: "v020-user",
        session,
        ceremony: reg.ceremony,
        response: made.json,
        rp,
        now: later,
      });
      assert.ok(added.ok, JSON.stringify(added));
      const opts = await passkeySignInOptions(db, { rp, now: later });
      assert.ok(opts.ok);
      const used = await verifyPasskeySignIn(db, {
        ceremony: opts.ceremony,
        response: await get(opts.options, made.credential, { origin }),
        rp,
        now: later,
      });
      assert.deepEqual(used, { ok: true, userId: "v020-user", passkeyId: added.passkey.id });
    },
  },
];
