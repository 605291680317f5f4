/**
 * The database handle of the mail server: a libSQL client, a clock, one writer at a time, and
 * events raised inside a write that listeners receive only once it committed.
 *
 * @module
 */
import { MAIL_SCHEMA } from "./schema.ts";

/** A value bound to a statement parameter. */
export type SqlValue = null | string | number | bigint | boolean | Uint8Array | ArrayBuffer | Date;

/** A statement with positional arguments. */
export interface SqlStatement {
  /** SQL text with `?` placeholders. */
  sql: string;
  /** Positional arguments. */
  args: SqlValue[];
}

/** A result row: column name to value. */
export type SqlRow = Record<string, SqlValue>;

/** The result of a statement. */
export interface SqlResult {
  /** Rows returned. */
  rows: SqlRow[];
  /** Rows changed by an insert, update or delete. */
  rowsAffected: number;
  /** Row id of the last insert. */
  lastInsertRowid: bigint | undefined;
}

/** An open transaction (the subset of libSQL's `Transaction` the server uses). */
export interface SqlTransaction {
  /** Runs one statement. */
  execute(stmt: SqlStatement | string): Promise<SqlResult>;
  /** Runs statements in order. */
  batch(stmts: (SqlStatement | string)[]): Promise<SqlResult[]>;
  /** Commits. */
  commit(): Promise<void>;
  /** Rolls back. */
  rollback(): Promise<void>;
  /** Releases the transaction. */
  close(): void;
  /** True once committed, rolled back or closed. */
  readonly closed: boolean;
}

/**
 * The database the server runs on: the subset of `@libsql/client`'s `Client` it uses, so a
 * libSQL client (`createClient({ url: "file:mail.db" })`) is passed as it is.
 */
export interface SqlClient {
  /** Runs one statement. */
  execute(stmt: SqlStatement | string): Promise<SqlResult>;
  /** Runs statements in one implicit transaction. */
  batch(
    stmts: (SqlStatement | string)[],
    mode?: "write" | "read" | "deferred",
  ): Promise<SqlResult[]>;
  /** Opens an interactive transaction. */
  transaction(mode?: "write" | "read" | "deferred"): Promise<SqlTransaction>;
}

/** Types of the events the server raises (and delivers to webhooks). */
export type MailEventType =
  | "item.received"
  | "request.completed"
  | "request.failed"
  | "rule.changed";

/** Every event type. */
export const MAIL_EVENT_TYPES: readonly MailEventType[] = [
  "item.received",
  "request.completed",
  "request.failed",
  "rule.changed",
];

/** An event raised by a committed write. */
export interface MailEvent {
  /** Unique id (`evt_...`). */
  id: string;
  /** What happened. */
  type: MailEventType;
  /** Account it concerns. */
  account_id: string;
  /** When, epoch milliseconds. */
  created_at: number;
  /** Event payload. */
  data: Record<string, unknown>;
}

/** What a write callback gets: the transaction and a way to raise events. */
export interface WriteScope {
  /** The open write transaction. */
  tx: SqlTransaction;
  /** Raises an event, delivered after commit. */
  emit(type: MailEventType, accountId: string | number, data: Record<string, unknown>): void;
  /** The time of this write, epoch milliseconds. */
  now: number;
}

/** The mail server's database. */
export class MailDb {
  /** The libSQL client. */
  readonly client: SqlClient;
  /** The clock, epoch milliseconds. */
  readonly now: () => number;
  #lock: Promise<unknown> = Promise.resolve();
  #listeners: ((event: MailEvent) => void)[] = [];

  /** Wraps a client; call `migrate()` before use. */
  constructor(client: SqlClient, now: () => number = Date.now) {
    this.client = client;
    this.now = now;
  }

  /** Creates the tables and indexes (idempotent) and turns on WAL for file databases. */
  async migrate(): Promise<void> {
    try {
      await this.client.execute("PRAGMA journal_mode=WAL");
    } catch { /* not a file database */ }
    await this.client.batch([...MAIL_SCHEMA], "write");
  }

  /** Runs a read statement. */
  execute(stmt: SqlStatement | string): Promise<SqlResult> {
    return this.client.execute(stmt);
  }

  /** Adds a listener for committed events. */
  onEvent(listener: (event: MailEvent) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Runs `fn` in a write transaction, one at a time in this process; commits when it returns,
   * rolls back when it throws. Events it raised reach listeners after the commit.
   */
  write<T>(fn: (scope: WriteScope) => Promise<T>): Promise<T> {
    const run = this.#lock.then(() => this.#retrying(fn));
    this.#lock = run.catch(() => {});
    return run;
  }

  /** Retries a write that found the database locked by another connection or process. */
  async #retrying<T>(fn: (scope: WriteScope) => Promise<T>): Promise<T> {
    for (let attempt = 0;; attempt++) {
      try {
        return await this.#write(fn);
      } catch (err) {
        const code = String((err as { code?: unknown }).code ?? "");
        if (!code.startsWith("SQLITE_BUSY") || attempt >= 20) throw err;
        await new Promise((resolve) => setTimeout(resolve, 5 * 2 ** Math.min(attempt, 6)));
      }
    }
  }

  async #write<T>(fn: (scope: WriteScope) => Promise<T>): Promise<T> {
    const events: MailEvent[] = [];
    const now = this.now();
    const tx = await this.client.transaction("write");
    let result: T;
    try {
      result = await fn({
        tx,
        now,
        emit: (type, accountId, data) =>
          events.push({
            id: `evt_${crypto.randomUUID()}`,
            type,
            account_id: String(accountId),
            created_at: now,
            data,
          }),
      });
      await tx.commit();
    } catch (err) {
      if (!tx.closed) await tx.rollback().catch(() => {});
      throw err;
    } finally {
      tx.close();
    }
    for (const event of events) {
      for (const listener of this.#listeners) listener(event);
    }
    return result;
  }
}
