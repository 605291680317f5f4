/**
 * Sessions as records, for a site that wants its users to see and end them: a row in
 * `user_sessions` per sign-in (`createUserSession` with `record`), keyed by the core's session
 * id (not a secret: a cookie also needs its signature), with the device read from the user
 * agent, the place as the client's network prefix (IPv4 /24, IPv6 /48), the times of creation,
 * last request (refreshed at most once a minute by `readUserSession` with `recorded`) and
 * last factor entered (`verified_at`, for the step-up). Ending one records its id in
 * `revoked_sessions`, the same store as a sign-out, so every copy of its cookie stops working.
 * Core-only sites keep the stateless cookie: nothing here is needed for them.
 *
 * @module
 */
import type { ClockOptions } from "./input.ts";
import { nowOf, params, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import { all, first, run } from "./query.ts";
import { recordRevoked } from "./session_revocation.ts";

/** Longest session name, in characters. */
export const MAX_SESSION_NAME = 100;
/** `last_seen_at` is written at most once per this many milliseconds per session. */
export const SESSION_SEEN_RESOLUTION_MS = 60_000;

/** What a site tells about a new session (all optional). */
export interface SessionRecordInput {
  /** The request's `User-Agent` (at most 512 characters are kept). */
  userAgent?: string;
  /** The client's IP address (only its network prefix is kept). */
  ip?: string;
  /** How the user signed in, e.g. `password`, `passkey`, `totp`, `oauth:github`. */
  method?: string;
}

/** A recorded session, as the sessions page shows it. */
export interface UserSessionRecord {
  /** The session id (the core's), for {@linkcode endSession} and {@linkcode renameSession}. */
  id: string;
  /** A name the user gave it, or null. */
  name: string | null;
  /** The device, read from the user agent, e.g. "Firefox on Linux"; "Unknown device". */
  device: string;
  /** The user agent as received (cut at 512 characters), or null. */
  userAgent: string | null;
  /** The client's network prefix, e.g. `203.0.113.0/24`, or null. */
  place: string | null;
  /** How the user signed in, or null. */
  method: string | null;
  /** When it began, ms since the epoch. */
  createdAt: number;
  /** Its last request (to the minute), ms since the epoch. */
  lastSeenAt: number;
  /** When a factor was last entered in it (sign-in or step-up), ms since the epoch. */
  verifiedAt: number;
  /** When its cookie expires, ms since the epoch. */
  expiresAt: number;
  /** True for the session of the request that asked. */
  current: boolean;
}

/** "Browser on system" from a user agent. */
export function deviceOf(userAgent: string | null | undefined): string {
  const ua = userAgent ?? "";
  const browser = /Edg(?:e|A|iOS)?\//.test(ua)
    ? "Edge"
    : /OPR\/|Opera/.test(ua)
    ? "Opera"
    : /Firefox\/|FxiOS\//.test(ua)
    ? "Firefox"
    : /Chrome\/|CriOS\/|Chromium\//.test(ua)
    ? "Chrome"
    : /Safari\//.test(ua)
    ? "Safari"
    : null;
  const system = /iPhone|iPad|iPod/.test(ua)
    ? "iOS"
    : /Android/.test(ua)
    ? "Android"
    : /CrOS/.test(ua)
    ? "ChromeOS"
    : /Windows/.test(ua)
    ? "Windows"
    : /Mac OS X|Macintosh/.test(ua)
    ? "macOS"
    : /Linux/.test(ua)
    ? "Linux"
    : null;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? "Unknown device";
}

/** The network prefix of an IP address: IPv4 /24, IPv6 /48; null for anything else. */
export function placeOf(ip: string | null | undefined): string | null {
  const s = (ip ?? "").trim().replace(/^\[|\]$/g, "").toLowerCase();
  const v4 = /^(?:::ffff:)?(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4) {
    const parts = v4.slice(1, 4).map(Number);
    if (parts.some((n) => n > 255) || Number(v4[4]) > 255) return null;
    return `${parts.join(".")}.0/24`;
  }
  if (!/^[0-9a-f:]+$/.test(s) || !s.includes(":")) return null;
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return null;
  const groups = [...head, ...Array(fill).fill("0"), ...tail];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return `${groups.slice(0, 3).map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/48`;
}

/** Stores the record of a new session. @internal */
export async function recordSession(
  db: D1Database,
  o: {
    id: string;
    userId: string;
    input: unknown;
    expiresAt: number;
    now: number;
  },
): Promise<void> {
  const input = o.input as SessionRecordInput;
  if (typeof input !== "object" || input === null) fail("invalid_input");
  const ua = input.userAgent === undefined ? null : stringOf(input.userAgent, 4096).slice(0, 512);
  const ip = input.ip === undefined ? null : stringOf(input.ip, 200);
  const method = input.method === undefined ? null : stringOf(input.method, 100);
  await run(
    db,
    `INSERT INTO user_sessions (id, user_id, name, user_agent, ip_prefix, method, created_at,
       last_seen_at, verified_at, expires_at)
     VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    [o.id, o.userId, ua, placeOf(ip), method, o.now, o.now, o.now, o.expiresAt],
  );
  // Records of sessions past their expiry go, a few at a time.
  await run(
    db,
    `DELETE FROM user_sessions WHERE id IN
     (SELECT id FROM user_sessions WHERE expires_at <= ? LIMIT 20)`,
    [o.now],
  );
}

/** Refreshes a session's last request, at most once per minute. @internal */
export async function touchSession(db: D1Database, id: string, now: number): Promise<void> {
  await run(db, "UPDATE user_sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?", [
    now,
    id,
    now - SESSION_SEEN_RESOLUTION_MS,
  ]);
}

/** When a factor was last entered in session `id` of `userId`, or null. @internal */
export async function verifiedAt(
  db: D1Database,
  userId: string,
  id: string,
): Promise<number | null> {
  const row = await first<{ verified_at: number }>(
    db,
    "SELECT verified_at FROM user_sessions WHERE id = ? AND user_id = ?",
    id,
    userId,
  );
  return row ? Number(row.verified_at) : null;
}

/** Parameters of {@linkcode listUserSessions}. */
export interface ListUserSessionsParams extends ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The id of the asking request's session, marked `current`. */
  currentId?: string;
}

/** Result of {@linkcode listUserSessions}. */
export type ListUserSessionsResult = FlowResult<{ sessions: UserSessionRecord[] }, CommonError>;

/**
 * The user's live recorded sessions (not ended, not expired), the most recent first. Never
 * throws.
 *
 * @example
 * ```ts
 * import { listUserSessions, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await listUserSessions(db, { userId: "5d0c...", currentId: "this session's id" });
 * if (r.ok) for (const s of r.sessions) console.log(s.device, s.place, s.current);
 * ```
 */
export function listUserSessions(
  db: D1Database,
  p: ListUserSessionsParams,
): Promise<ListUserSessionsResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const current = o.currentId === undefined ? null : stringOf(o.currentId, 256);
    const now = nowOf(o.now);
    const rows = await all<Record<string, unknown>>(
      db,
      `SELECT s.* FROM user_sessions s WHERE s.user_id = ? AND s.expires_at > ?
       AND NOT EXISTS (SELECT 1 FROM revoked_sessions r WHERE r.id = s.id)
       AND EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id)
       ORDER BY s.last_seen_at DESC, s.created_at DESC LIMIT 200`,
      userId,
      now,
    );
    return {
      ok: true as const,
      sessions: rows.map((r) => ({
        id: String(r.id),
        name: r.name === null ? null : String(r.name),
        device: deviceOf(r.user_agent as string | null),
        userAgent: r.user_agent === null ? null : String(r.user_agent),
        place: r.ip_prefix === null ? null : String(r.ip_prefix),
        method: r.method === null ? null : String(r.method),
        createdAt: Number(r.created_at),
        lastSeenAt: Number(r.last_seen_at),
        verifiedAt: Number(r.verified_at),
        expiresAt: Number(r.expires_at),
        current: r.id === current,
      })),
    };
  });
}

/** Parameters of {@linkcode renameSession}. */
export interface RenameSessionParams {
  /** The signed-in user's id. */
  userId: string;
  /** The session to name. */
  sessionId: string;
  /** The name (1–100 characters, no control characters), or null to clear it. */
  name: string | null;
}

/** Result of {@linkcode renameSession}. */
export type RenameSessionResult = FlowResult<
  { name: string | null },
  CommonError | "not_found" | "invalid_name"
>;

/**
 * Names one of the user's sessions ("work laptop"). Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, renameSession } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await renameSession(db, { userId: "5d0c...", sessionId: "…", name: "Work laptop" });
 * ```
 */
export function renameSession(
  db: D1Database,
  p: RenameSessionParams,
): Promise<RenameSessionResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const sessionId = stringOf(o.sessionId, 256);
    let name: string | null = null;
    if (o.name !== null) {
      name = stringOf(o.name, 1000).trim();
      // deno-lint-ignore no-control-regex
      if (!name || name.length > MAX_SESSION_NAME || /[\u0000-\u001f\u007f]/.test(name)) {
        fail("invalid_name");
      }
    }
    const changed = await run(
      db,
      "UPDATE user_sessions SET name = ? WHERE id = ? AND user_id = ?",
      [name, sessionId, userId],
    );
    if (changed !== 1) fail("not_found");
    return { ok: true as const, name };
  });
}

/** Parameters of {@linkcode endSession}. */
export interface EndSessionParams extends EventOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The session to end (one of the user's). */
  sessionId: string;
}

/** Result of {@linkcode endSession}. */
export type EndSessionResult = FlowResult<Record<never, never>, CommonError | "not_found">;

/**
 * Ends one of the user's recorded sessions: its id goes to `revoked_sessions` (every copy of
 * its cookie stops working) and its record goes. `not_found` for a session that is not the
 * user's. Never throws.
 *
 * @example
 * ```ts
 * import { endSession, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await endSession(db, { userId: "5d0c...", sessionId: "the lost phone's session" });
 * ```
 */
export async function endSession(db: D1Database, p: EndSessionParams): Promise<EndSessionResult> {
  const seen: Seen = { detail: { scope: "one" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const userId = stringOf(o.userId, 200);
    seen.userId = userId;
    const sessionId = stringOf(o.sessionId, 256);
    seen.detail = { ...seen.detail, sessionId };
    const now = nowOf(o.now);
    const row = await first<{ expires_at: number }>(
      db,
      "SELECT expires_at FROM user_sessions WHERE id = ? AND user_id = ?",
      sessionId,
      userId,
    );
    if (!row) fail("not_found");
    await recordRevoked(db, sessionId, Number(row.expires_at), now);
    await run(db, "DELETE FROM user_sessions WHERE id = ? AND user_id = ?", [sessionId, userId]);
    return { ok: true as const };
  });
  return await report(p, result, seen, (r) => (r.ok ? "session.ended" : null));
}

/** Parameters of {@linkcode endOtherSessions}. */
export interface EndOtherSessionsParams extends EventOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The session that stays (the asking request's). */
  keepId: string;
}

/** Result of {@linkcode endOtherSessions}: how many sessions were ended. */
export type EndOtherSessionsResult = FlowResult<{ ended: number }, CommonError>;

/**
 * Ends every recorded session of the user but `keepId`, each as {@linkcode endSession} does.
 * Sessions made without a record (before the site recorded them) are not among them: to end
 * those too, use `signOutEverywhere` and sign the browser in again. Never throws.
 *
 * @example
 * ```ts
 * import { endOtherSessions, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await endOtherSessions(db, { userId: "5d0c...", keepId: "this session's id" });
 * if (r.ok) console.log(r.ended, "sessions ended");
 * ```
 */
export async function endOtherSessions(
  db: D1Database,
  p: EndOtherSessionsParams,
): Promise<EndOtherSessionsResult> {
  const seen: Seen = { detail: { scope: "others" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const userId = stringOf(o.userId, 200);
    seen.userId = userId;
    const keep = stringOf(o.keepId, 256);
    const now = nowOf(o.now);
    const rows = await all<{ id: string; expires_at: number }>(
      db,
      "SELECT id, expires_at FROM user_sessions WHERE user_id = ? AND id <> ? LIMIT 500",
      userId,
      keep,
    );
    for (const r of rows) {
      await recordRevoked(db, String(r.id), Number(r.expires_at), now);
      await run(db, "DELETE FROM user_sessions WHERE id = ?", [r.id]);
    }
    seen.detail = { ...seen.detail, count: rows.length };
    return { ok: true as const, ended: rows.length };
  });
  return await report(p, result, seen, (r) => (r.ok && r.ended > 0 ? "session.ended" : null));
}
