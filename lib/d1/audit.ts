/**
 * An audit log of administrators' actions: who did what to which thing, when, and the thing
 * before and after. {@linkcode listAudit} reads them newest first, filtered by the start of
 * the action, the actor's e-mail or the target.
 *
 * A change that cannot be made in the same transaction as its entry (a call to another
 * service) is recorded in two steps, so that no change goes unrecorded:
 * {@linkcode reserveAudit} writes an entry *before* the change (action
 * {@linkcode UNFINISHED_AUDIT_ACTION}, the request as its target); if that fails, the site
 * refuses the change. {@linkcode recordAudit} with `reservation` then fills that entry in with
 * what was done; {@linkcode withdrawAudit} removes it when nothing was changed after all. If
 * filling in fails, the reserved entry stays: who, when and which request, the details lost.
 * Rows are otherwise only ever added.
 *
 * The table is not part of `schema.sql` (sites without administrators need none):
 * {@linkcode applyAuditSchema} creates it. Never put secrets in `before`/`after` (relay
 * secrets, API keys, password hashes): the log is shown to every administrator.
 *
 * @module
 */
import type { D1Database } from "./types.ts";
import type { ClockOptions } from "./input.ts";
import { nowOf, params, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { all, first, run } from "./query.ts";

/** The statements of {@linkcode applyAuditSchema} (idempotent). */
export const AUDIT_SCHEMA_SQL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS audit_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  actor_id TEXT,
  actor_email TEXT NOT NULL COLLATE NOCASE,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  before_json TEXT,
  after_json TEXT
)`,
  "CREATE INDEX IF NOT EXISTS audit_log_action ON audit_log (action, id)",
  "CREATE INDEX IF NOT EXISTS audit_log_actor ON audit_log (actor_email COLLATE NOCASE, id)",
  "CREATE INDEX IF NOT EXISTS audit_log_target ON audit_log (target, id)",
];

/** Longest `before` or `after` value, as JSON, in characters. */
export const MAX_AUDIT_VALUE = 65_536;
/** Largest page of {@linkcode listAudit}. */
export const MAX_AUDIT_PAGE = 200;

/**
 * Creates the `audit_log` table and its indexes when missing. Throws the driver's error when
 * the database fails.
 *
 * @example
 * ```ts
 * import { applyAuditSchema, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await applyAuditSchema(db);
 * ```
 */
export async function applyAuditSchema(db: D1Database): Promise<void> {
  await db.batch(AUDIT_SCHEMA_SQL.map((sql) => db.prepare(sql)));
}

/** One entry of the audit log. */
export interface AuditEntry {
  /** Increasing id. */
  id: number;
  /** When, in milliseconds since the epoch. */
  at: number;
  /** The administrator's user id (null for an actor without one, e.g. a start-up script). */
  actorId: string | null;
  /** The administrator's e-mail. */
  actorEmail: string;
  /** What was done, dotted (`user.promote`, `relay.rotate_secret`, `server.config.patch`). */
  action: string;
  /** What it was done to (`user:<id>`, `relay:<site id>`, `server:/config/apps/http`). */
  target: string;
  /** The thing before (any JSON value), or null when it did not exist. */
  before: unknown;
  /** The thing after (any JSON value), or null when it no longer exists. */
  after: unknown;
}

/**
 * The action of an entry reserved by {@linkcode reserveAudit} and not (yet) filled in: the
 * change it was reserved for may or may not have happened.
 */
export const UNFINISHED_AUDIT_ACTION = "audit.unfinished";

/** Parameters of {@linkcode recordAudit}. */
export interface RecordAuditParams extends ClockOptions {
  /** The administrator's user id, or null. */
  actorId: string | null;
  /** The administrator's e-mail (1 to 320 characters). */
  actorEmail: string;
  /** What was done (1 to 100 characters: letters, digits, `._-`). */
  action: string;
  /** What it was done to (1 to 500 characters). */
  target: string;
  /** The thing before; default null. At most {@linkcode MAX_AUDIT_VALUE} as JSON. */
  before?: unknown;
  /** The thing after; default null. At most {@linkcode MAX_AUDIT_VALUE} as JSON. */
  after?: unknown;
  /**
   * The id of an entry from {@linkcode reserveAudit} to fill in (it keeps its id). When it is
   * not an unfinished entry any more (filled in or withdrawn), a new entry is added instead.
   */
  reservation?: number;
}

/** Result of {@linkcode recordAudit}: the new entry's id. */
export type RecordAuditResult = FlowResult<{ id: number }, CommonError>;

const ACTION = /^[a-z0-9][a-z0-9._-]{0,99}$/;

function jsonOf(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    return fail("invalid_input");
  }
  if (text === undefined || text.length > MAX_AUDIT_VALUE) fail("invalid_input");
  return text;
}

/**
 * Adds an entry. `invalid_input` for a malformed action, an empty actor or target, or a
 * value that is not JSON or longer than {@linkcode MAX_AUDIT_VALUE}. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, recordAudit } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await recordAudit(db, {
 *   actorId: "5d0c...",
 *   actorEmail: "admin@example.com",
 *   action: "user.promote",
 *   target: "user:7a1e...",
 *   before: { isAdmin: false },
 *   after: { isAdmin: true },
 * });
 * ```
 */
export function recordAudit(db: D1Database, p: RecordAuditParams): Promise<RecordAuditResult> {
  return guard(async () => {
    const o = params(p);
    const actorId = o.actorId === null ? null : stringOf(o.actorId, 200);
    const actorEmail = stringOf(o.actorEmail, 320).trim();
    const action = stringOf(o.action, 100);
    const target = stringOf(o.target, 500);
    if (!actorEmail || !ACTION.test(action) || !target) fail("invalid_input");
    const before = jsonOf(o.before);
    const after = jsonOf(o.after);
    const now = nowOf(o.now);
    if (o.reservation !== undefined) {
      const reserved = idOf(o.reservation);
      const filled = await first<{ id: number }>(
        db,
        `UPDATE audit_log SET at = ?, actor_id = ?, actor_email = ?, action = ?, target = ?,
         before_json = ?, after_json = ? WHERE id = ? AND action = ? RETURNING id`,
        now,
        actorId,
        actorEmail,
        action,
        target,
        before,
        after,
        reserved,
        UNFINISHED_AUDIT_ACTION,
      );
      if (filled) return { ok: true as const, id: Number(filled.id) };
    }
    const row = await first<{ id: number }>(
      db,
      `INSERT INTO audit_log (at, actor_id, actor_email, action, target, before_json, after_json)
       VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      now,
      actorId,
      actorEmail,
      action,
      target,
      before,
      after,
    );
    if (!row) fail("db_error");
    return { ok: true as const, id: Number(row.id) };
  });
}

function idOf(v: unknown): number {
  if (!Number.isSafeInteger(v) || (v as number) < 1) fail("invalid_input");
  return v as number;
}

/** Parameters of {@linkcode reserveAudit}. */
export interface ReserveAuditParams extends ClockOptions {
  /** The administrator's user id, or null. */
  actorId: string | null;
  /** The administrator's e-mail (1 to 320 characters). */
  actorEmail: string;
  /** What is about to be done, e.g. the request (`POST /admin/users/5d0c.../admin`); 1 to 500. */
  target: string;
}

/**
 * Writes an entry before a change (action {@linkcode UNFINISHED_AUDIT_ACTION}), to be filled
 * in by {@linkcode recordAudit} with `reservation` once the change is made, or withdrawn by
 * {@linkcode withdrawAudit} when nothing changed. When this fails, make no change: it could
 * not be recorded. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, recordAudit, reserveAudit, withdrawAudit } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const who = { actorId: "5d0c...", actorEmail: "admin@example.com" };
 * const r = await reserveAudit(db, { ...who, target: "POST /admin/relay/billing/rotate" });
 * if (!r.ok) throw new Error("the audit log cannot be written: change nothing");
 * const changed = true; // ... make the change ...
 * if (changed) {
 *   await recordAudit(db, { ...who, action: "relay.rotate_secret", target: "relay:billing", reservation: r.id });
 * } else await withdrawAudit(db, r.id);
 * ```
 */
export function reserveAudit(db: D1Database, p: ReserveAuditParams): Promise<RecordAuditResult> {
  return guard(async () => {
    const o = params(p);
    return await recordAudit(db, {
      actorId: o.actorId as string | null,
      actorEmail: o.actorEmail as string,
      action: UNFINISHED_AUDIT_ACTION,
      target: o.target as string,
      now: o.now as number | undefined,
    });
  });
}

/**
 * Removes a reserved entry that was never filled in (nothing was changed after all). A filled
 * entry is never removed. Resolves to whether one was removed. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, withdrawAudit } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await withdrawAudit(db, 42);
 * ```
 */
export function withdrawAudit(
  db: D1Database,
  id: number,
): Promise<FlowResult<{ withdrawn: boolean }, CommonError>> {
  return guard(async () => {
    const n = await run(db, "DELETE FROM audit_log WHERE id = ? AND action = ?", [
      idOf(id),
      UNFINISHED_AUDIT_ACTION,
    ]);
    return { ok: true as const, withdrawn: n === 1 };
  });
}

/** Parameters of {@linkcode listAudit}: every filter is optional and they combine. */
export interface ListAuditParams {
  /** Entries whose action starts with this (`user.` for every user action). */
  action?: string;
  /** Entries whose actor's e-mail starts with this (any case). */
  actor?: string;
  /** Entries whose target starts with this (`user:5d0c` for one user). */
  target?: string;
  /** Entries older than this id (a page's `next`). */
  before?: number;
  /** Page size, 1 to {@linkcode MAX_AUDIT_PAGE}; default 50. */
  limit?: number;
}

/** Result of {@linkcode listAudit}: newest first; `next` is the `before` of the next page. */
export type ListAuditResult = FlowResult<
  { entries: AuditEntry[]; next: number | null },
  CommonError
>;

interface AuditRow {
  id: number;
  at: number;
  actor_id: string | null;
  actor_email: string;
  action: string;
  target: string;
  before_json: string | null;
  after_json: string | null;
}

function parsed(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * One page of the audit log, newest first, filtered. Never throws.
 *
 * @example
 * ```ts
 * import { listAudit, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const page = await listAudit(db, { action: "user.", limit: 20 });
 * if (page.ok) for (const e of page.entries) console.log(e.actorEmail, e.action, e.target);
 * ```
 */
export function listAudit(db: D1Database, p: ListAuditParams = {}): Promise<ListAuditResult> {
  return guard(async () => {
    const o = params(p);
    const where: string[] = [];
    const args: unknown[] = [];
    const prefix = (column: string, v: unknown) => {
      if (v === undefined || v === "") return;
      const s = stringOf(v, 500);
      where.push(`${column} >= ? AND ${column} < ?`);
      args.push(s, s + "\u{10FFFF}");
    };
    prefix("action", o.action);
    prefix("actor_email", o.actor);
    prefix("target", o.target);
    if (o.before !== undefined) {
      if (!Number.isSafeInteger(o.before) || (o.before as number) < 1) fail("invalid_input");
      where.push("id < ?");
      args.push(o.before);
    }
    const limit = o.limit === undefined ? 50 : o.limit;
    if (
      !Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_AUDIT_PAGE
    ) {
      fail("invalid_input");
    }
    const rows = await all<AuditRow>(
      db,
      `SELECT id, at, actor_id, actor_email, action, target, before_json, after_json
       FROM audit_log ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY id DESC LIMIT ?`,
      ...args,
      (limit as number) + 1,
    );
    const more = rows.length > (limit as number);
    const page = more ? rows.slice(0, limit as number) : rows;
    const entries = page.map((r) => ({
      id: Number(r.id),
      at: Number(r.at),
      actorId: r.actor_id === null ? null : String(r.actor_id),
      actorEmail: String(r.actor_email),
      action: String(r.action),
      target: String(r.target),
      before: parsed(r.before_json),
      after: parsed(r.after_json),
    }));
    return {
      ok: true as const,
      entries,
      next: more ? entries[entries.length - 1].id : null,
    };
  });
}
