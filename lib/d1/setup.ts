/**
 * The plan of the `setup-db` command, as data: which database it creates, the lines to add to
 * the site's configuration, and (for Cloudflare D1) the Wrangler commands. The command in
 * `lib/cli/setup_db.ts` carries it out; this file only computes text, so it runs anywhere.
 *
 * @module
 */

/** Input of {@linkcode planSetup}. */
export interface SetupInput {
  /** Database name: letters, digits, `-` and `_`, up to 64 characters. */
  name: string;
  /** libSQL URL to use instead of the local file `file:.data/<name>.db`. */
  url?: string;
  /** Plan a Cloudflare D1 database instead of libSQL. */
  d1?: boolean;
  /** The D1 database id, once `wrangler d1 create` printed it. */
  databaseId?: string;
  /** Path of the schema file given to `wrangler d1 execute` (default `schema.sql`). */
  schemaFile?: string;
}

/** What {@linkcode planSetup} returns. */
export interface SetupPlan {
  /** `libsql` or `d1`. */
  kind: "libsql" | "d1";
  /** The libSQL URL (libsql only). */
  url?: string;
  /** Local directory to create for a `file:` URL, if any. */
  directory?: string;
  /** Lines to add to the site's configuration (`.env` lines, or the `wrangler.toml` block). */
  config: string[];
  /** Wrangler commands, each as an argument list (d1 only). */
  commands: string[][];
}

/** A valid database name, else null. */
export function parseDatabaseName(name: unknown): string | null {
  return typeof name === "string" && /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(name) ? name : null;
}

/**
 * Computes the setup plan. Throws a `TypeError` for an invalid name or URL.
 *
 * @example
 * ```ts
 * import { planSetup } from "@gatehouse/gatehouse/d1";
 * console.log(planSetup({ name: "site" }).config); // ["DATABASE_URL=file:.data/site.db"]
 * console.log(planSetup({ name: "site", d1: true }).commands[0]); // ["wrangler", "d1", "create", "site"]
 * ```
 */
export function planSetup(input: SetupInput): SetupPlan {
  const name = parseDatabaseName(input.name);
  if (!name) throw new TypeError("database name: letters, digits, - and _ (up to 64)");
  if (input.d1) {
    const file = input.schemaFile ?? "schema.sql";
    return {
      kind: "d1",
      config: [
        "[[d1_databases]]",
        `binding = "DB"`,
        `database_name = "${name}"`,
        `database_id = "${input.databaseId ?? "<database_id printed by wrangler d1 create>"}"`,
      ],
      commands: [
        ["wrangler", "d1", "create", name],
        ["wrangler", "d1", "execute", name, "--remote", "--file", file],
      ],
    };
  }
  const url = input.url ?? `file:.data/${name}.db`;
  let directory: string | undefined;
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length).replace(/^\/\/(?=\/)/, "");
    const slash = path.lastIndexOf("/");
    directory = slash > 0 ? path.slice(0, slash) : undefined;
  } else if (!/^(libsql|https?|wss?):\/\/[^\s]+$/.test(url) && url !== ":memory:") {
    throw new TypeError("url must be file:, libsql://, https://, http://, ws:// or wss://");
  }
  const remote = !url.startsWith("file:") && url !== ":memory:";
  return {
    kind: "libsql",
    url,
    directory,
    config: remote
      ? [`DATABASE_URL=${url}`, "DATABASE_AUTH_TOKEN=<your libSQL auth token>"]
      : [`DATABASE_URL=${url}`],
    commands: [],
  };
}
