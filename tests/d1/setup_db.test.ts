import assert from "node:assert/strict";
import { openLibsql, SCHEMA_SQL, splitStatements } from "../../d1.ts";
import { V030_TABLES } from "./cases/schema.ts";

const cli = new URL("../../cli.ts", import.meta.url).pathname;
const dec = new TextDecoder();

async function gatehouse(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", cli, ...args],
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: o.code, out: dec.decode(o.stdout), err: dec.decode(o.stderr) };
}

async function tables(url: string): Promise<string[]> {
  const db = openLibsql(url);
  try {
    const r = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all<{ name: string }>();
    return r.results.map((t) => t.name);
  } finally {
    db.close();
  }
}

Deno.test("setup-db <name>: a local libSQL file with the schema, twice; prints DATABASE_URL", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (let i = 0; i < 2; i++) {
      const r = await gatehouse(dir, ["setup-db", "site"]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /^\s+DATABASE_URL=file:\.data\/site\.db$/m);
    }
    assert.deepEqual(await tables(`file:${dir}/.data/site.db`), [
      "auth_events",
      "auth_throttle",
      "backup_codes",
      "oauth_identities",
      "otp_codes",
      "passkey_challenges",
      "passkeys",
      "revoked_sessions",
      "sqlite_sequence",
      "totp_factors",
      "trusted_devices",
      "user_sessions",
      "users",
    ]);
    const other = await gatehouse(dir, [
      "setup-db",
      "other",
      "--url",
      `file:${dir}/nested/dir/o.db`,
    ]);
    assert.equal(other.code, 0, other.err);
    assert.match(other.out, new RegExp(`DATABASE_URL=file:${dir}/nested/dir/o.db`));
    assert.deepEqual(await tables(`file:${dir}/nested/dir/o.db`), [
      "auth_events",
      "auth_throttle",
      "backup_codes",
      "oauth_identities",
      "otp_codes",
      "passkey_challenges",
      "passkeys",
      "revoked_sessions",
      "sqlite_sequence",
      "totp_factors",
      "trusted_devices",
      "user_sessions",
      "users",
    ]);
    const bad = await gatehouse(dir, ["setup-db", "../evil"]);
    assert.equal(bad.code, 1);
    assert.equal((await gatehouse(dir, ["setup-db"])).code, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("setup-db --d1 without Wrangler prints the commands and the binding", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/empty-bin`);
    const r = await gatehouse(dir, ["setup-db", "site", "--d1"], { PATH: `${dir}/empty-bin` });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /not installed/);
    assert.match(r.out, /^\s+wrangler d1 create site$/m);
    assert.match(r.out, /^\s+wrangler d1 execute site --remote --file schema\.sql$/m);
    assert.match(
      r.out,
      /^\[\[d1_databases\]\]\nbinding = "DB"\ndatabase_name = "site"\ndatabase_id = "/m,
    );
    assert.equal(await Deno.readTextFile(`${dir}/schema.sql`), SCHEMA_SQL);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("setup-db --d1 with Wrangler runs create and execute --remote, prints the id", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/bin`);
    const fake = `${dir}/bin/wrangler`;
    // A stand-in for Wrangler (not installed here): logs its arguments, answers like it.
    await Deno.writeTextFile(
      fake,
      `#!/bin/sh
echo "$@" >> "${dir}/calls.log"
case "$1 $2" in
  "d1 create") printf '[[d1_databases]]\\nbinding = "DB"\\ndatabase_name = "%s"\\ndatabase_id = "0b7c1e0a-1234-4cde-9f00-abcdef012345"\\n' "$3" ;;
  "d1 execute") cp "$6" "${dir}/executed.sql" ;;
  *) echo "3.99.0" ;;
esac
`,
    );
    await Deno.chmod(fake, 0o755);
    const r = await gatehouse(dir, ["setup-db", "site", "--d1"], {
      PATH: `${dir}/bin:/usr/bin:/bin`,
    });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /database_id = "0b7c1e0a-1234-4cde-9f00-abcdef012345"/);
    assert.match(r.out, /binding = "DB"/);
    const calls = (await Deno.readTextFile(`${dir}/calls.log`)).trim().split("\n");
    assert.equal(calls[1], "d1 create site");
    assert.match(calls[2], /^d1 execute site --remote --file \S+schema\.sql$/);
    assert.equal(await Deno.readTextFile(`${dir}/executed.sql`), SCHEMA_SQL);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("migrate-db upgrades a pre-0.2.0 file once; --d1 prints the commands", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const url = `file:${dir}/old.db`;
    const db = openLibsql(url);
    await db.prepare(
      "CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT NOT NULL COLLATE NOCASE, password_hash TEXT, email_verified INTEGER NOT NULL DEFAULT 0, stamp TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)",
    ).run();
    db.close();
    const first = await gatehouse(dir, ["migrate-db", "--url", url]);
    assert.equal(first.code, 0, first.err);
    assert.match(first.out, /Added columns: name, is_admin/);
    const again = await gatehouse(dir, ["migrate-db"], { DATABASE_URL: url });
    assert.match(again.out, /Already up to date/);
    const d1 = await gatehouse(dir, ["migrate-db", "--d1", "site"]);
    assert.match(d1.out, /ALTER TABLE users ADD COLUMN is_admin INTEGER NOT NULL DEFAULT 0/);
    assert.equal((await gatehouse(dir, ["migrate-db"])).code, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("migrate-db brings a 0.2.0 file to 0.3.0: it names the tables it made, then changes nothing; --d1 prints the schema.sql step", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const url = `file:${dir}/v020.db`;
    const db = openLibsql(url);
    const old = await Deno.readTextFile(new URL("./fixtures/schema-0.2.0.sql", import.meta.url));
    for (const sql of splitStatements(old)) await db.prepare(sql).run();
    db.close();
    const before = await tables(url);
    const first = await gatehouse(dir, ["migrate-db", "--url", url]);
    assert.equal(first.code, 0, first.err);
    assert.equal(first.out.trim(), `Created tables: ${V030_TABLES.join(", ")}`);
    const made = (await tables(url)).filter((t) => !before.includes(t) && !t.startsWith("sqlite_"));
    assert.deepEqual(made, V030_TABLES);
    const dump = async () => {
      const d = openLibsql(url);
      try {
        return (await d.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all())
          .results;
      } finally {
        d.close();
      }
    };
    const migrated = await dump();
    const again = await gatehouse(dir, ["migrate-db", "--url", url]);
    assert.equal(again.code, 0, again.err);
    assert.equal(again.out.trim(), "Already up to date.");
    assert.deepEqual(await dump(), migrated);
    const d1 = await gatehouse(dir, ["migrate-db", "--d1", "site"]);
    assert.equal(d1.code, 0, d1.err);
    assert.match(d1.out, /^\s+wrangler d1 execute site --remote --file schema\.sql$/m);
    assert.equal(await Deno.readTextFile(`${dir}/schema.sql`), SCHEMA_SQL);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
