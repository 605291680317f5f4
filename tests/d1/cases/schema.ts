import assert from "node:assert/strict";
import { applySchema, type D1Database, login, migrate, signup, verifyOtp } from "../../../d1.ts";
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
];
