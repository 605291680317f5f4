/**
 * `gatehouse setup-db <name>`: creates the database of the toolkit's user flows, applies
 * `schema.sql`, and prints the lines to add to the site's configuration. By default a local
 * libSQL file `.data/<name>.db`; `--url` picks another libSQL database (remote ones take
 * `--auth-token` or `DATABASE_AUTH_TOKEN`). `--d1` sets up a Cloudflare D1 database with
 * Wrangler when it is installed, else prints the Wrangler commands to run.
 *
 * @module
 */
import type { Command } from "./command.ts";
import { ExitCode } from "./command.ts";
import { UsageError } from "./usage_error.ts";
import { planSetup, type SetupPlan } from "../d1/setup.ts";
import { openLibsql } from "../d1/libsql.ts";
import { applySchema, SCHEMA_SQL } from "../d1/schema.ts";

/** Runs a program; null when it is not installed. */
async function exec(
  program: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string } | null> {
  try {
    const out = await new Deno.Command(program, { args, stdout: "piped", stderr: "piped" })
      .output();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) {
      return null;
    }
    throw e;
  }
}

/** The database id in `wrangler d1 create` output (TOML or JSON form). */
export function parseDatabaseId(output: string): string | null {
  const m = output.match(/"?database_id"?\s*[=:]\s*"([0-9a-fA-F-]{8,})"/);
  return m ? m[1] : null;
}

async function setupLibsql(plan: SetupPlan, authToken: string | undefined): Promise<number> {
  if (plan.directory) await Deno.mkdir(plan.directory, { recursive: true });
  const db = openLibsql({ url: plan.url!, authToken });
  try {
    await applySchema(db);
  } finally {
    db.close();
  }
  console.log(`Applied schema.sql (users, oauth_identities, otp_codes) to ${plan.url}`);
  console.log("\nAdd to the site's configuration (.env):\n");
  for (const line of plan.config) console.log(`  ${line}`);
  return ExitCode.Success;
}

async function setupD1(name: string, wrangler: string): Promise<number> {
  const version = await exec(wrangler, ["--version"]);
  if (!version || version.code !== 0) {
    const file = "schema.sql";
    let wrote = false;
    try {
      await Deno.writeTextFile(file, SCHEMA_SQL, { createNew: true });
      wrote = true;
    } catch {
      // An existing schema.sql is left as it is.
    }
    const plan = planSetup({ name, d1: true, schemaFile: file });
    console.log("Wrangler is not installed (npm install -g wrangler). Run:\n");
    for (const c of plan.commands) console.log(`  ${c.join(" ")}`);
    if (wrote) console.log(`\n(${file} was written to the current directory.)`);
    console.log("\nThen add to wrangler.toml, with the id printed by the first command:\n");
    for (const line of plan.config) console.log(line);
    return ExitCode.Success;
  }
  const create = await exec(wrangler, ["d1", "create", name]);
  if (!create || create.code !== 0) {
    console.error(
      `wrangler d1 create ${name} failed:\n${create?.stderr ?? ""}${create?.stdout ?? ""}`,
    );
    return ExitCode.Failure;
  }
  const databaseId = parseDatabaseId(create.stdout) ?? undefined;
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-schema-" });
  try {
    const file = `${dir}/schema.sql`;
    await Deno.writeTextFile(file, SCHEMA_SQL);
    const plan = planSetup({ name, d1: true, databaseId, schemaFile: file });
    const run = await exec(wrangler, plan.commands[1].slice(1));
    if (!run || run.code !== 0) {
      console.error(`wrangler d1 execute failed:\n${run?.stderr ?? ""}${run?.stdout ?? ""}`);
      return ExitCode.Failure;
    }
    console.log(`Created D1 database ${name} and applied schema.sql.`);
    console.log("\nAdd to wrangler.toml:\n");
    for (const line of plan.config) console.log(line);
    return ExitCode.Success;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** `setup-db`. */
export const setupDbCommand: Command = {
  name: "setup-db",
  usage: "<name> [--url <url>] [--auth-token <token>] [--d1]",
  short: "Creates the user-flow database and applies schema.sql",
  long:
    "Creates the database of the sign-in toolkit's user flows (tables users, oauth_identities, " +
    "otp_codes), applies schema.sql (safe to repeat) and prints the configuration lines to " +
    "add to the site. Without --url the database is the local libSQL file .data/<name>.db. " +
    "With --d1 it creates a Cloudflare D1 database through Wrangler and prints the " +
    "[[d1_databases]] binding; without Wrangler installed it prints the commands instead.",
  flags: [
    {
      name: "url",
      type: "string",
      value: "<url>",
      help: "libSQL URL (file:, libsql://, https://)",
    },
    {
      name: "auth-token",
      type: "string",
      value: "<token>",
      help: "Auth token of a remote libSQL server (default $DATABASE_AUTH_TOKEN)",
    },
    { name: "d1", type: "boolean", help: "Create a Cloudflare D1 database with Wrangler" },
    {
      name: "wrangler",
      type: "string",
      value: "<path>",
      help: "Wrangler executable",
      default: "wrangler",
    },
  ],
  async run({ flags, args }) {
    if (args.length !== 1) throw new UsageError("setup-db: expected one database name");
    const url = typeof flags.url === "string" ? flags.url : undefined;
    if (flags.d1 && url) throw new UsageError("setup-db: --d1 and --url exclude each other");
    let plan: SetupPlan;
    try {
      plan = planSetup({ name: args[0], url, d1: flags.d1 === true });
    } catch (e) {
      throw new UsageError(`setup-db: ${(e as Error).message}`);
    }
    if (plan.kind === "d1") return await setupD1(args[0], String(flags.wrangler ?? "wrangler"));
    const token = typeof flags["auth-token"] === "string"
      ? flags["auth-token"]
      : Deno.env.get("DATABASE_AUTH_TOKEN");
    return await setupLibsql(plan, token);
  },
};
