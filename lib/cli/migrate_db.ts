/**
 * `gatehouse migrate-db`: brings a user-flow database of an older version up to date (adds
 * `users.name` and `users.is_admin` when missing, then applies `schema.sql`, which creates the
 * tables added since) and says what it added. Safe to repeat.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";
import { openLibsql } from "../d1/libsql.ts";
import { SCHEMA_SQL } from "../d1/schema.ts";
import type { D1Database } from "../d1/types.ts";
import { migrate, V020_COLUMNS } from "../d1/migrate.ts";
import { parseDatabaseName } from "../d1/setup.ts";

/** `migrate-db`. */
export const migrateDbCommand: Command = {
  name: "migrate-db",
  usage: "[--url <url>] [--auth-token <token>] [--d1 <name>]",
  short: "Upgrades a user-flow database of an older version",
  long:
    "Adds the columns users.name and users.is_admin (version 0.2.0) to a libSQL database when " +
    "PRAGMA table_info shows them missing, then applies schema.sql, which creates the tables " +
    "added since (0.3.0: passkeys, second factors, recorded sessions, events), and prints what " +
    "it added. The database is --url, else $DATABASE_URL. With --d1 <name> it prints the " +
    "Wrangler commands for a D1 database (and writes schema.sql to the current directory " +
    "unless one is there).",
  flags: [
    { name: "url", type: "string", value: "<url>", help: "libSQL URL (default $DATABASE_URL)" },
    {
      name: "auth-token",
      type: "string",
      value: "<token>",
      help: "Auth token of a remote libSQL server (default $DATABASE_AUTH_TOKEN)",
    },
    { name: "d1", type: "string", value: "<name>", help: "Print the commands for a D1 database" },
  ],
  async run({ flags }) {
    if (typeof flags.d1 === "string") {
      const name = parseDatabaseName(flags.d1);
      if (!name) throw new UsageError("migrate-db: invalid D1 database name");
      console.log(`Check the columns of users:\n`);
      console.log(`  wrangler d1 execute ${name} --remote --command "PRAGMA table_info(users)"`);
      console.log(`\nFor each column missing from that list, run:\n`);
      for (const c of V020_COLUMNS) {
        console.log(
          `  wrangler d1 execute ${name} --remote --command "ALTER TABLE users ADD COLUMN ${c.name} ${c.definition}"`,
        );
      }
      let wrote = false;
      try {
        await Deno.writeTextFile("schema.sql", SCHEMA_SQL, { createNew: true });
        wrote = true;
      } catch {
        // An existing schema.sql is left as it is.
      }
      console.log(`\nThen create the tables added since (every statement is IF NOT EXISTS):\n`);
      console.log(`  wrangler d1 execute ${name} --remote --file schema.sql`);
      console.log(
        wrote
          ? "\n(schema.sql was written to the current directory.)"
          : "\n(schema.sql was already in the current directory and was left as it is: it must " +
            "be this version's.)",
      );
      return ExitCode.Success;
    }
    const url = typeof flags.url === "string" ? flags.url : Deno.env.get("DATABASE_URL");
    if (!url) throw new UsageError("migrate-db: give --url or set DATABASE_URL");
    const token = typeof flags["auth-token"] === "string"
      ? flags["auth-token"]
      : Deno.env.get("DATABASE_AUTH_TOKEN");
    const db = openLibsql({ url, authToken: token });
    try {
      const before = await tablesOf(db);
      const added = await migrate(db);
      const created = (await tablesOf(db)).filter((t) => !before.includes(t));
      if (added.length) console.log(`Added columns: ${added.join(", ")}`);
      if (created.length) console.log(`Created tables: ${created.join(", ")}`);
      if (!added.length && !created.length) console.log("Already up to date.");
    } finally {
      db.close();
    }
    return ExitCode.Success;
  },
};

/** The database's tables (SQLite's own left out), by name. */
async function tablesOf(db: D1Database): Promise<string[]> {
  const r = await db.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  ).all<{ name: string }>();
  return (r.results ?? []).map((t) => String(t.name));
}
