/**
 * Sign-in events: a flow given `onEvent` (an injected sink, like `sendEmail`) hands it a
 * typed {@linkcode AuthEvent} for its outcome — a sign-in that succeeded, failed or was
 * throttled, a second factor asked for, a factor added or removed, a passkey used, a session
 * ended, a password or an e-mail address changed. The sink is called after the flow's work,
 * awaited, and its failures are swallowed: a broken sink never changes a flow's answer. Events
 * never carry a secret (no password, code, token or key), only who, what, when and from where.
 *
 * {@linkcode authEventStore} is a sink that keeps them in the site's database (table
 * `auth_events`), and {@linkcode listAuthEvents} reads them per user, newest first.
 *
 * @module
 */
import type { ClockOptions } from "./input.ts";
import { nowOf, params, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import type { D1Database } from "./types.ts";
import { all, first, run } from "./query.ts";

/** Every event type, as a list. */
export const AUTH_EVENT_TYPES = [
  "sign_in.succeeded",
  "sign_in.failed",
  "sign_in.throttled",
  "sign_in.second_factor_required",
  "factor.added",
  "factor.removed",
  "backup_codes.regenerated",
  "passkey.used",
  "session.ended",
  "password.changed",
  "email.changed",
  "step_up.succeeded",
] as const;

/** One of {@linkcode AUTH_EVENT_TYPES}. */
export type AuthEventType = typeof AUTH_EVENT_TYPES[number];

/** What happened. */
export interface AuthEvent {
  /** The event's type. */
  type: AuthEventType;
  /** When, ms since the epoch. */
  at: number;
  /** The account, when known (null for a sign-in of an unknown address). */
  userId: string | null;
  /** The address the flow was given or the account's, when known. */
  email: string | null;
  /** The client the site passed (an IP address or a device id), when given. */
  client: string | null;
  /**
   * Details: `method` (`password`, `totp`, `backup`, `passkey`, `oauth`, `signup_code`),
   * `factor` (`totp`, `passkey`), `error` (the failure's code), `scope` (`one`, `others`,
   * `everywhere`), `count`, `passkeyId`, `sessionId`, `provider` and `created` (an OAuth
   * sign-in: the provider id, and whether it made the account).
   */
  detail: Record<string, string | number | boolean>;
}

/** The sink a site injects: receives each event; may be async; its errors are ignored. */
export type AuthEventSink = (event: AuthEvent) => void | Promise<void>;

/** The option of every flow that reports its outcome. */
export interface EventOptions {
  /** Receives the event of the flow's outcome (see {@linkcode AuthEvent}). */
  onEvent?: AuthEventSink;
}

/** The `onEvent` option of a flow: a sink, or `invalid_input`. @internal */
export function sinkOf(v: unknown): AuthEventSink | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== "function") fail("invalid_input");
  return v as AuthEventSink;
}

/** Hands an event to the sink, if any; never throws. @internal */
export async function emit(
  sink: AuthEventSink | undefined,
  event: Omit<AuthEvent, "at" | "detail" | "email" | "client"> & Partial<AuthEvent>,
  now: number,
): Promise<void> {
  if (!sink) return;
  try {
    await sink({
      type: event.type,
      at: event.at ?? now,
      userId: event.userId,
      email: event.email ?? null,
      client: event.client ?? null,
      detail: event.detail ?? {},
    });
  } catch {
    // A sink's failure never changes the flow's answer.
  }
}

/**
 * Reads `onEvent`, `now` and a few named fields of a flow's params without ever throwing
 * (params can be anything), for events reported after the flow. @internal
 */
export function reportOf(p: unknown): {
  sink: AuthEventSink | undefined;
  now: number;
  field(name: string): string | null;
} {
  let o: Record<string, unknown> = {};
  try {
    if (typeof p === "object" && p !== null) o = p as Record<string, unknown>;
    const sink = typeof o.onEvent === "function" ? o.onEvent as AuthEventSink : undefined;
    const now = typeof o.now === "number" && Number.isFinite(o.now) ? o.now : Date.now();
    return {
      sink,
      now,
      field(name) {
        try {
          const v = o[name];
          return typeof v === "string" && v.length <= 320 ? v : null;
        } catch {
          return null;
        }
      },
    };
  } catch {
    return { sink: undefined, now: Date.now(), field: () => null };
  }
}

/**
 * A sink that keeps events in the site's database (table `auth_events` of `schema.sql`).
 * Writes that fail are dropped (the flows go on).
 *
 * @example
 * ```ts
 * import { authEventStore, login, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const onEvent = authEventStore(db);
 * await login(db, { email: "ada@example.com", password: "…", onEvent });
 * ```
 */
export function authEventStore(db: D1Database): AuthEventSink {
  return async (e) => {
    await run(
      db,
      `INSERT INTO auth_events (at, type, user_id, email, client, detail_json)
       VALUES (?, ?, ?, ?, ?, ?)`,
      [e.at, e.type, e.userId, e.email, e.client, JSON.stringify(e.detail ?? {})],
    );
  };
}

/** Largest page of {@linkcode listAuthEvents}. */
export const MAX_AUTH_EVENTS_PAGE = 200;

/** A stored event, with its id (for paging). */
export interface StoredAuthEvent extends AuthEvent {
  /** Increasing id. */
  id: number;
}

/** Parameters of {@linkcode listAuthEvents}. */
export interface ListAuthEventsParams extends ClockOptions {
  /** The account. */
  userId: string;
  /** Only events older than this id (the `next` of the previous page). */
  before?: number;
  /** Page size, 1 to 200 (default 50). */
  limit?: number;
}

/** Result of {@linkcode listAuthEvents}: a page and the cursor of the next (or null). */
export type ListAuthEventsResult = FlowResult<
  { events: StoredAuthEvent[]; next: number | null },
  CommonError
>;

/**
 * A user's stored events, newest first. Never throws.
 *
 * @example
 * ```ts
 * import { listAuthEvents, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await listAuthEvents(db, { userId: "5d0c...", limit: 20 });
 * if (r.ok) for (const e of r.events) console.log(new Date(e.at), e.type, e.detail);
 * ```
 */
export function listAuthEvents(
  db: D1Database,
  p: ListAuthEventsParams,
): Promise<ListAuthEventsResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const limit = o.limit === undefined ? 50 : o.limit;
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 200) {
      fail("invalid_input");
    }
    const before = o.before === undefined ? Number.MAX_SAFE_INTEGER : o.before;
    if (!Number.isSafeInteger(before)) fail("invalid_input");
    nowOf(o.now);
    const rows = await all<Record<string, unknown>>(
      db,
      `SELECT id, at, type, user_id, email, client, detail_json FROM auth_events
       WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
      userId,
      before,
      (limit as number) + 1,
    );
    const page = rows.slice(0, limit as number);
    return {
      ok: true as const,
      events: page.map((r) => ({
        id: Number(r.id),
        at: Number(r.at),
        type: String(r.type) as AuthEventType,
        userId: r.user_id === null ? null : String(r.user_id),
        email: r.email === null ? null : String(r.email),
        client: r.client === null ? null : String(r.client),
        detail: parseDetail(r.detail_json),
      })),
      next: rows.length > page.length ? Number(page[page.length - 1].id) : null,
    };
  });
}

function parseDetail(v: unknown): Record<string, string | number | boolean> {
  try {
    const d = JSON.parse(String(v));
    return typeof d === "object" && d !== null && !Array.isArray(d) ? d : {};
  } catch {
    return {};
  }
}

/**
 * The id of the account with (normalised) `email`, for the event of a flow that stopped
 * before it read the account; undefined when there is none or the read fails. @internal
 */
export async function accountIdOf(db: D1Database, email: string): Promise<string | undefined> {
  try {
    const row = await first<{ id: string }>(db, "SELECT id FROM users WHERE email = ?", email);
    return row ? String(row.id) : undefined;
  } catch {
    return undefined;
  }
}

function userOf(result: unknown): string | null {
  const id = (result as { userId?: unknown }).userId;
  return typeof id === "string" ? id : null;
}

/** What a flow learnt while it ran, for the event of its outcome. @internal */
export interface Seen {
  userId?: string;
  email?: string;
  detail?: Record<string, string | number | boolean>;
}

/**
 * The event of a first-factor sign-in's answer (password, provider, signup code): succeeded,
 * throttled, a second step asked for, failed; none for malformed input. @internal
 */
export function signInEvent(r: { ok: boolean; error?: string }): AuthEventType | null {
  if (r.ok) return "sign_in.succeeded";
  switch (r.error) {
    case "too_many_attempts":
      return "sign_in.throttled";
    case "second_factor_required":
    case "second_factor_setup_required":
      return "sign_in.second_factor_required";
    case "invalid_input":
      return null;
    default:
      return "sign_in.failed";
  }
}

/**
 * Reports a flow's outcome: `pick` names the event type of `result` (or null for none);
 * `seen` adds what the flow learnt (the user, details). Resolves to `result`. @internal
 */
export async function report<R extends { ok: boolean; error?: string }>(
  p: unknown,
  result: R,
  seen: Seen,
  pick: (result: R) => AuthEventType | null,
): Promise<R> {
  const r = reportOf(p);
  if (!r.sink) return result;
  const type = pick(result);
  if (!type) return result;
  const detail: Record<string, string | number | boolean> = { ...seen.detail };
  if (!result.ok && result.error) detail.error = result.error;
  await emit(r.sink, {
    type,
    userId: seen.userId ?? userOf(result),
    email: seen.email ?? r.field("email"),
    client: r.field("client"),
    detail,
  }, r.now);
  return result;
}
