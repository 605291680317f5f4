/**
 * `gatehouse migrate-db`: brings a user-flow database created before 0.2.0 up to date (adds
 * `users.name` and `users.is_admin` when missing, then applies `schema.sql`). Safe to repeat.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";
import { openLibsql } from "../d1/libsql.ts";
import { migrate, V020_COLUMNS } from "../d1/migrate.ts";
import { parseDatabaseName } from "../d1/setup.ts";

/** `migrate-db`. */
export const migrateDbCommand: Command = {
  name: "migrate-db",
  usage: "[--url <url>] [--auth-token <token>] [--d1 <name>]",
  short: "Upgrades a user-flow database created before 0.2.0",
  long:
    "Adds the columns users.name and users.is_admin (version 0.2.0) to a libSQL database when " +
    "PRAGMA table_info shows them missing, then applies schema.sql. The database is --url, " +
    "else $DATABASE_URL. With --d1 <name> it prints the Wrangler commands for a D1 database.",
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
      return ExitCode.Success;
    }
    const url = typeof flags.url === "string" ? flags.url : Deno.env.get("DATABASE_URL");
    if (!url) throw new UsageError("migrate-db: give --url or set DATABASE_URL");
    const token = typeof flags["auth-token"] === "string"
      ? flags["auth-token"]
      : Deno.env.get("DATABASE_AUTH_TOKEN");
    const db = openLibsql({ url, authToken: token });
    try {
      const added = await migrate(db);
      console.log(added.length ? `Added columns: ${added.join(", ")}` : "Already up to date.");
    } finally {
      db.close();
    }
    return ExitCode.Success;
  },
};
