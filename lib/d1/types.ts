/**
 * The D1-shaped database interface the flows are written against: the subset of Cloudflare
 * D1's `D1Database` they use. A real D1 binding (`env.DB`) satisfies it as it is; the libSQL
 * adapter (`openLibsql`) gives the same interface over `@libsql/client`.
 *
 * @module
 */

/** Metadata of a statement's result. D1 adds more fields; the flows read only these. */
export interface D1ResultMeta {
  /** Rows changed by an INSERT, UPDATE or DELETE. */
  changes?: number;
  /** Rowid of the last inserted row. */
  last_row_id?: number;
  /** Anything else the driver reports. */
  [key: string]: unknown;
}

/** Result of `all()`, `run()` and each statement of `batch()`. */
export interface D1Result<T = Record<string, unknown>> {
  /** Rows, as plain objects keyed by column name. */
  results: T[];
  /** True when the statement ran. */
  success: boolean;
  /** Change counts and driver details. */
  meta: D1ResultMeta;
}

/** A prepared statement: bind values, then run it one of three ways. */
export interface D1PreparedStatement {
  /** Binds positional `?` parameters; returns a statement carrying them. */
  bind(...values: unknown[]): D1PreparedStatement;
  /** Runs the statement and resolves to its first row, or null when there is none. */
  first<T = Record<string, unknown>>(): Promise<T | null>;
  /** Runs the statement and resolves to all rows. */
  all<T = Record<string, unknown>>(): Promise<D1Result<T>>;
  /** Runs the statement for its effect. */
  run<T = Record<string, unknown>>(): Promise<D1Result<T>>;
}

/** A D1-shaped database: a Cloudflare D1 binding or the libSQL adapter. */
export interface D1Database {
  /** Prepares one SQL statement with `?` placeholders. */
  prepare(query: string): D1PreparedStatement;
  /** Runs statements in order inside one transaction; all or nothing. */
  batch<T = Record<string, unknown>>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]>;
}
