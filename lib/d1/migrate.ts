/**
 * Migration of older databases: version 0.2.0 added `users.name` (TEXT) and `users.is_admin`
 * (INTEGER NOT NULL DEFAULT 0); each is added only when `PRAGMA table_info` shows it missing.
 * Then `schema.sql` is applied, which creates the tables added since (`auth_throttle`, the
 * throttles of guessing; `revoked_sessions`, the sessions ended by a sign-out; 0.3.0's
 * `totp_factors`, `backup_codes`, `trusted_devices`, `passkeys`, `passkey_challenges`,
 * `user_sessions` and `auth_events`). Safe to run any number of times.
 *
 * @module
 */
import type { D1Database } from "./types.ts";
import { applySchema } from "./schema.ts";

/** Columns added by version 0.2.0, with their definitions. */
export const V020_COLUMNS: ReadonlyArray<{ readonly name: string; readonly definition: string }> = [
  { name: "name", definition: "TEXT" },
  { name: "is_admin", definition: "INTEGER NOT NULL DEFAULT 0" },
];

/**
 * Brings a database up to date and resolves to the names of the columns it added (empty
 * when there was nothing to do). Throws the driver's error when the database fails.
 *
 * @example
 * ```ts
 * import { migrate, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * console.log(await migrate(db)); // ["name", "is_admin"] on a 0.1 database, then []
 * db.close();
 * ```
 */
export async function migrate(db: D1Database): Promise<string[]> {
  const info = await db.prepare("PRAGMA table_info(users)").all<{ name: string }>();
  const have = new Set((info.results ?? []).map((c) => String(c.name)));
  const added: string[] = [];
  if (have.size > 0) {
    for (const col of V020_COLUMNS) {
      if (have.has(col.name)) continue;
      try {
        await db.prepare(`ALTER TABLE users ADD COLUMN ${col.name} ${col.definition}`).run();
        added.push(col.name);
      } catch (e) {
        // Another migration running at the same time added it first.
        if (!/duplicate column/i.test(String((e as Error)?.message))) throw e;
      }
    }
  }
  await applySchema(db);
  return added;
}
