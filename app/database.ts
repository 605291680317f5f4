/**
 * The app's database (`DATABASE_URL`, default `file:.data/gatehouse.db`: a file only the app's
 * user may read, 0600 with its `-wal` and `-shm`, in directories made 0700;
 * `DATABASE_AUTH_TOKEN` for a remote libSQL server), with the toolkit's tables: the sites that
 * keep accounts or throttles in it open it here.
 *
 * @module
 */
import { type D1Database, migrate, openLibsql } from "../d1.ts";
import type { AppEnv } from "./env.ts";
import { preparePrivateLibsqlFile } from "../mail.ts";

/**
 * Opens the app's database and creates the toolkit's tables if missing.
 *
 * @example
 * ```ts
 * import { loadAppEnv } from "./env.ts";
 * import { openAppDatabase } from "./database.ts";
 * const db = await openAppDatabase(loadAppEnv({ DATABASE_URL: "file:/tmp/demo.db" }));
 * ```
 */
export async function openAppDatabase(env: AppEnv): Promise<D1Database> {
  const url = env.vars.DATABASE_URL ?? "file:.data/gatehouse.db";
  await preparePrivateLibsqlFile(url); // 0600 (and its -wal, -shm), new directories 0700
  const db = openLibsql({ url, authToken: env.vars.DATABASE_AUTH_TOKEN });
  await migrate(db);
  return db;
}
