import assert from "node:assert/strict";
import { applySchema, type D1Database, login, migrate, signup, verifyOtp } from "../../../d1.ts";
import { hashPassword } from "../../../mod.ts";
import type { Case } from "../_backend.ts";
import { codeIn, ITER, newEmail, outbox, PASSWORD, SECRET } from "../_helpers.ts";

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
];
