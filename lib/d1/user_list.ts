/**
 * Reading many users at once, for an operator's console: a page of users in e-mail order,
 * optionally those whose e-mail or name starts with a search term, with keyset cursors so a
 * page costs the same on the first and the thousandth page; and one user by e-mail.
 *
 * Searching names and listing administrators fast needs the indexes that
 * {@linkcode applyUserListIndexes} creates (`users_name_search` on `name COLLATE NOCASE`,
 * `users_admins` on the e-mails of administrators); without them those read the whole table.
 * E-mail prefixes use the unique e-mail index of `schema.sql`. Matching folds ASCII
 * letters only (SQLite's `NOCASE`): "ada" finds "Ada", "élodie" does not find "Élodie".
 *
 * @module
 */
import { b64urlDecode, b64urlEncode } from "../auth/_encoding.ts";
import type { D1Database } from "./types.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { emailOf, params, stringOf } from "./input.ts";
import { all, first } from "./query.ts";
import { publicUser, type User, userByEmail, type UserRow } from "./users.ts";

/** Longest search term, in characters. */
export const MAX_SEARCH_LENGTH = 254;
/** Largest page of {@linkcode listUsers}. */
export const MAX_USERS_PAGE = 200;

/** The statements of {@linkcode applyUserListIndexes} (idempotent). */
export const USER_LIST_INDEXES_SQL: readonly string[] = [
  "CREATE INDEX IF NOT EXISTS users_name_search ON users (name COLLATE NOCASE)",
  "CREATE INDEX IF NOT EXISTS users_admins ON users (email COLLATE NOCASE) WHERE is_admin = 1",
];

/**
 * Creates the indexes that make name searches and the administrators' list of
 * {@linkcode listUsers} fast (idempotent). Throws the driver's error when the database fails.
 *
 * @example
 * ```ts
 * import { applySchema, applyUserListIndexes, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await applySchema(db);
 * await applyUserListIndexes(db);
 * ```
 */
export async function applyUserListIndexes(db: D1Database): Promise<void> {
  await db.batch(USER_LIST_INDEXES_SQL.map((sql) => db.prepare(sql)));
}

/** Parameters of {@linkcode listUsers}. */
export interface ListUsersParams {
  /**
   * Users whose e-mail or name starts with this (trimmed, ASCII letters in any case); empty
   * or absent lists everyone.
   */
  search?: string;
  /** The page after this cursor (a page's `next`). */
  after?: string;
  /** The page before this cursor (a page's `previous`); not with `after`. */
  before?: string;
  /** Page size, 1 to {@linkcode MAX_USERS_PAGE}; default 50. */
  limit?: number;
  /** Only administrators (`is_admin = 1`). */
  adminsOnly?: boolean;
}

/** A page of {@linkcode listUsers}. */
export interface UsersPage {
  /** The users of the page, in e-mail order. */
  users: User[];
  /** Cursor of the next page (pass as `after`), or null on the last page. */
  next: string | null;
  /** Cursor of the previous page (pass as `before`), or null on the first page. */
  previous: string | null;
  /** How many users match in all. */
  total: number;
}

/** Result of {@linkcode listUsers}. */
export type ListUsersResult = FlowResult<UsersPage, CommonError>;

const COLUMNS = "id, email, password_hash, email_verified, stamp, name, is_admin, created_at";
const NAME = "name COLLATE NOCASE";

function cursorOf(email: string): string {
  return b64urlEncode(new TextEncoder().encode(email));
}

function emailOfCursor(v: unknown): string | null {
  if (v === undefined) return null;
  const raw = stringOf(v, 400);
  const bytes = b64urlDecode(raw);
  if (!bytes || bytes.length === 0) fail("invalid_input");
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return fail("invalid_input");
  }
}

/**
 * One page of users in e-mail order (case-insensitive), searched by the start of the e-mail
 * or of the name, with cursors to the pages around it. Each page is at most two index range
 * scans plus a count, whatever its position. Never throws.
 *
 * @example
 * ```ts
 * import { listUsers, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const page = await listUsers(db, { search: "ada", limit: 20 });
 * if (page.ok) {
 *   for (const user of page.users) console.log(user.email, user.name);
 *   if (page.next) await listUsers(db, { search: "ada", after: page.next, limit: 20 });
 * }
 * ```
 */
export function listUsers(db: D1Database, p: ListUsersParams = {}): Promise<ListUsersResult> {
  return guard(async () => {
    const o = params(p);
    const search = o.search === undefined ? "" : stringOf(o.search, 4096).trim();
    if (search.length > MAX_SEARCH_LENGTH) fail("invalid_input");
    const limit = o.limit === undefined ? 50 : o.limit;
    if (
      !Number.isSafeInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_USERS_PAGE
    ) {
      fail("invalid_input");
    }
    const after = emailOfCursor(o.after);
    const before = emailOfCursor(o.before);
    if (after !== null && before !== null) fail("invalid_input");
    if (o.adminsOnly !== undefined && typeof o.adminsOnly !== "boolean") fail("invalid_input");
    const admins = o.adminsOnly === true ? " AND is_admin = 1" : "";
    const backwards = before !== null;
    const dir = backwards ? "DESC" : "ASC";
    const keyset = after !== null ? " AND email > ?" : backwards ? " AND email < ?" : "";
    const keyArgs = after !== null ? [after] : backwards ? [before] : [];
    const n = (limit as number) + 1;
    let rows: UserRow[];
    let total: number;
    if (search === "") {
      rows = await all<UserRow>(
        db,
        `SELECT ${COLUMNS} FROM users WHERE 1 = 1${admins}${keyset} ORDER BY email ${dir} LIMIT ?`,
        ...keyArgs,
        n,
      );
      total = Number(
        (await first<{ n: number }>(db, `SELECT count(*) AS n FROM users WHERE 1 = 1${admins}`))
          ?.n ?? 0,
      );
    } else {
      // Two index range scans (e-mail, name), each cut to one page, merged in e-mail order.
      const low = search;
      const high = search + "\u{10FFFF}";
      rows = await all<UserRow>(
        db,
        `SELECT * FROM (SELECT ${COLUMNS} FROM users
           WHERE email >= ?1 AND email < ?2${admins}${keyset.replace("?", "?3")}
           ORDER BY email ${dir} LIMIT ?4)
         UNION
         SELECT * FROM (SELECT ${COLUMNS} FROM users
           WHERE ${NAME} >= ?1 AND ${NAME} < ?2${admins}${keyset.replace("?", "?3")}
           ORDER BY email ${dir} LIMIT ?4)
         ORDER BY email ${dir} LIMIT ?4`,
        low,
        high,
        keyArgs[0] ?? "",
        n,
      );
      total = Number(
        (await first<{ n: number }>(
          db,
          `SELECT count(*) AS n FROM users
           WHERE ((email >= ?1 AND email < ?2) OR (${NAME} >= ?1 AND ${NAME} < ?2))${admins}`,
          low,
          high,
        ))?.n ?? 0,
      );
    }
    const more = rows.length > (limit as number);
    if (more) rows = rows.slice(0, limit as number);
    if (backwards) rows.reverse();
    const users = rows.map(publicUser);
    const firstEmail = users[0]?.email;
    const lastEmail = users[users.length - 1]?.email;
    // Forwards: a previous page exists when we came from a cursor; backwards: a next one does.
    const hasNext = backwards ? true : more;
    const hasPrevious = backwards ? more : after !== null;
    return {
      ok: true as const,
      users,
      next: hasNext && lastEmail !== undefined ? cursorOf(lastEmail) : null,
      previous: hasPrevious && firstEmail !== undefined ? cursorOf(firstEmail) : null,
      total,
    };
  });
}

/** Result of {@linkcode getUserByEmail}. */
export type GetUserByEmailResult = FlowResult<
  { user: User },
  CommonError | "invalid_email" | "not_found"
>;

/**
 * The user with this e-mail address (canonical form, any case). Never throws.
 *
 * @example
 * ```ts
 * import { getUserByEmail, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const found = await getUserByEmail(db, "Ada@Example.com");
 * if (found.ok) console.log(found.user.id, found.user.isAdmin);
 * ```
 */
export function getUserByEmail(db: D1Database, email: string): Promise<GetUserByEmailResult> {
  return guard(async () => {
    const row = await userByEmail(db, emailOf(email));
    if (!row) fail("not_found");
    return { ok: true as const, user: publicUser(row) };
  });
}
