/**
 * Reads every row of every table of a database and checks that no one-time secret a flow
 * handed out (a code, a link's token, a backup code, a device token) is stored as it is.
 */
import assert from "node:assert/strict";
import type { D1Database } from "../../d1.ts";

/** Every value of every row of every table, as text, with the table it came from. */
export async function storedValues(db: D1Database): Promise<{ table: string; value: string }[]> {
  const tables = await db.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
  ).all<{ name: string }>();
  const out: { table: string; value: string }[] = [];
  for (const { name } of tables.results) {
    const rows = await db.prepare(`SELECT * FROM "${name}"`).all<Record<string, unknown>>();
    for (const row of rows.results) {
      for (const v of Object.values(row)) {
        if (v === null || v === undefined) continue;
        out.push({
          table: name,
          value: v instanceof ArrayBuffer || ArrayBuffer.isView(v)
            ? Array.from(new Uint8Array(v as ArrayBuffer), (b) => String.fromCharCode(b)).join("")
            : String(v),
        });
      }
    }
  }
  return out;
}

/** A hex digest or a number: where a short decimal code may show up by chance. */
const DIGEST_OR_NUMBER = /^(?:[0-9a-f]{40,}|-?\d+(?:\.\d+)?)$/;

/**
 * Asserts that none of `secrets` is stored: a secret of 12 characters or more must not
 * appear inside any value; a shorter one (a 6-digit code) must not be a value, nor appear
 * inside a value other than a hex digest or a number (where six digits occur by chance).
 */
export async function assertNoneInClear(db: D1Database, secrets: string[]): Promise<void> {
  const values = await storedValues(db);
  assert.ok(values.length > 0, "the database holds rows");
  for (const secret of secrets) {
    assert.ok(secret.length >= 6, `a secret to look for: ${secret}`);
    for (const { table, value } of values) {
      const found = secret.length >= 12
        ? value.includes(secret)
        : value === secret || (value.includes(secret) && !DIGEST_OR_NUMBER.test(value));
      assert.ok(!found, `a one-time secret is stored in clear in table ${table}`);
    }
  }
}
