/**
 * Ended sessions in the site's database (table `revoked_sessions`): the core's
 * `RevocationStore` on D1 or libSQL. A sign-out records the session's id with its expiry; every
 * read of a session looks the id up (for `/d1` users in the same query as the user, see
 * `session.ts`). Each recording also deletes up to {@linkcode REVOKED_CLEANUP_BATCH} rows whose
 * session has expired, so the table holds about the sign-outs of one session lifetime.
 *
 * @module
 */
import type { RevocationStore } from "../auth/revocation.ts";
import type { D1Database } from "./types.ts";
import { batch, first, stmt } from "./query.ts";

/** Most expired rows each recorded sign-out deletes. */
export const REVOKED_CLEANUP_BATCH = 100;

/** Longest session id recorded, in characters (the core's ids have 22 or 23). */
const MAX_ID = 256;

/**
 * Records session `id` as ended until `expiresAt` (ms since the epoch), and deletes up to
 * {@linkcode REVOKED_CLEANUP_BATCH} expired rows, in one batch. Stops with `db_error` when the
 * database fails. @internal
 */
export async function recordRevoked(
  db: D1Database,
  id: string,
  expiresAt: number,
  now: number,
): Promise<void> {
  await batch(db, [
    stmt(
      db,
      "INSERT INTO revoked_sessions (id, expires_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING",
      id,
      expiresAt,
    ),
    stmt(
      db,
      `DELETE FROM revoked_sessions WHERE id IN
       (SELECT id FROM revoked_sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)`,
      now,
      REVOKED_CLEANUP_BATCH,
    ),
  ]);
}

/** Whether session `id` is recorded as ended. Stops with `db_error` when the database fails. @internal */
export async function isRecorded(db: D1Database, id: string): Promise<boolean> {
  return (await first(db, "SELECT 1 AS x FROM revoked_sessions WHERE id = ?", id)) !== null;
}

/**
 * The core's `RevocationStore` over the site's database, for sessions of the core's
 * `createSessionCookie` (an owner-only site, a relay site) on a site that has a D1 or libSQL
 * database anyway: `revokeSession` records ended sessions in `revoked_sessions`, and
 * `readSession` with `revoked` refuses them. (`/d1` users' sessions need no store: `signOut`
 * and `readUserSession` use the same table.) A failing database rejects with an `Error` whose
 * message is `db_error` (driver messages never leave), so `readSession` refuses the cookie and
 * `revokeSession` rejects.
 *
 * @example
 * ```ts
 * import { applySchema, openLibsql, revocationStore } from "@gatehouse/gatehouse/d1";
 * import { clearSessionCookie, readSession, revokeSession } from "@gatehouse/gatehouse";
 * const db = openLibsql("file:.data/site.db");
 * await applySchema(db);
 * const store = revocationStore(db);
 * const config = { secret: "SESSION_SECRET value", cookieName: "__Host-session" };
 * const request = new Request("https://example.com/logout", { method: "POST" });
 * await revokeSession(config, request, store); // sign-out: ends the cookie everywhere
 * const headers = { "set-cookie": clearSessionCookie(config) };
 * console.log(await readSession(config, request, { revoked: store })); // null
 * db.close();
 * ```
 */
export function revocationStore(db: D1Database): RevocationStore {
  return {
    async revoke(id: string, expiresAt: number): Promise<void> {
      if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID) {
        throw new TypeError("id must be a string of 1 to 256 characters");
      }
      if (typeof expiresAt !== "number" || !Number.isFinite(expiresAt)) {
        throw new TypeError("expiresAt must be seconds since the epoch");
      }
      await recordRevoked(db, id, Math.round(expiresAt * 1000), Date.now());
    },
    isRevoked(id: string): Promise<boolean> {
      return isRecorded(db, id);
    },
  };
}
