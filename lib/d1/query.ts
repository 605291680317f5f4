/**
 * Database calls for the flows: each failure of the driver becomes the `db_error` code (so no
 * driver message, which may quote bound values, leaves a flow).
 *
 * @module
 */
import type { D1Database, D1PreparedStatement, D1Result } from "./types.ts";
import { FlowStop, isUniqueViolation } from "./errors.ts";

/** Prepares and binds a statement; a database object of the wrong shape is a `db_error`. */
export function stmt(db: D1Database, sql: string, ...args: unknown[]): D1PreparedStatement {
  try {
    return args.length ? db.prepare(sql).bind(...args) : db.prepare(sql);
  } catch {
    throw new FlowStop("db_error");
  }
}

/** First row of a query, or null. */
export async function first<T>(db: D1Database, sql: string, ...args: unknown[]): Promise<T | null> {
  try {
    return await stmt(db, sql, ...args).first<T>();
  } catch {
    throw new FlowStop("db_error");
  }
}

/** All rows of a query. */
export async function all<T>(db: D1Database, sql: string, ...args: unknown[]): Promise<T[]> {
  try {
    return (await stmt(db, sql, ...args).all<T>()).results ?? [];
  } catch {
    throw new FlowStop("db_error");
  }
}

/**
 * Runs a write and returns the number of changed rows. A UNIQUE violation becomes
 * `uniqueError` when given (else `db_error`).
 */
export async function run(
  db: D1Database,
  sql: string,
  args: unknown[],
  uniqueError?: "email_taken",
): Promise<number> {
  try {
    const r = await stmt(db, sql, ...args).run();
    return Number(r.meta?.changes ?? 0);
  } catch (e) {
    if (e instanceof FlowStop) throw e;
    throw new FlowStop(uniqueError && isUniqueViolation(e) ? uniqueError : "db_error");
  }
}

/** Runs statements in one transaction (one round trip); returns each statement's result. */
export async function batchResults(
  db: D1Database,
  statements: D1PreparedStatement[],
): Promise<D1Result[]> {
  try {
    return await db.batch(statements);
  } catch {
    throw new FlowStop("db_error");
  }
}

/** Runs statements in one transaction; returns each statement's changed-row count. */
export async function batch(
  db: D1Database,
  statements: D1PreparedStatement[],
  uniqueError?: "email_taken",
): Promise<number[]> {
  try {
    const results: D1Result[] = await db.batch(statements);
    return results.map((r) => Number(r.meta?.changes ?? 0));
  } catch (e) {
    throw new FlowStop(uniqueError && isUniqueViolation(e) ? uniqueError : "db_error");
  }
}
