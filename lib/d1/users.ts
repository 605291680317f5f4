/**
 * Rows of the `users` table as the flows read them, and the values stored with them.
 *
 * @module
 */
import { hashPassword, verifyPassword } from "../auth/password.ts";
import type { D1Database } from "./types.ts";
import { first } from "./query.ts";
import { clearTries, takeTry, THROTTLE } from "./throttle.ts";
import { verifiedAt } from "./user_sessions.ts";

/** A user row as the flows read it. @internal */
export interface UserRow {
  id: string;
  email: string;
  password_hash: string | null;
  email_verified: number;
  stamp: string;
  name: string | null;
  is_admin: number;
  created_at: number;
}

/** The columns of a {@linkcode UserRow}, for a SELECT. @internal */
export const COLUMNS =
  "id, email, password_hash, email_verified, stamp, name, is_admin, created_at";

/** The user with this (normalized) e-mail, or null. @internal */
export function userByEmail(db: D1Database, email: string): Promise<UserRow | null> {
  return first<UserRow>(db, `SELECT ${COLUMNS} FROM users WHERE email = ?`, email);
}

/** What a password sign-in reads: the user, and the pending password of an unverified one. */
export interface CredentialRow {
  id: string;
  email_verified: number;
  password_hash: string | null;
  pending_hash: string | null;
}

/**
 * The password a sign-in is checked against, in one query: the confirmed one of a verified
 * account, the pending signup's of an unverified one (whose own column is never used). @internal
 */
export async function credentialsByEmail(
  db: D1Database,
  email: string,
): Promise<{ id: string; verified: boolean; hash: string | null } | null> {
  const row = await first<CredentialRow>(
    db,
    `SELECT u.id, u.email_verified, u.password_hash, o.password_hash AS pending_hash
     FROM users u LEFT JOIN otp_codes o ON o.email = u.email AND o.purpose = 'signup'
     WHERE u.email = ?`,
    email,
  );
  if (!row) return null;
  const verified = Number(row.email_verified) === 1;
  return { id: row.id, verified, hash: verified ? row.password_hash : row.pending_hash };
}

/** The user with this id, or null. @internal */
export function userById(db: D1Database, id: string): Promise<UserRow | null> {
  return first<UserRow>(db, `SELECT ${COLUMNS} FROM users WHERE id = ?`, id);
}

/** A new user id (random UUID). @internal */
export function newUserId(): string {
  return crypto.randomUUID();
}

/**
 * A new security stamp: random, stored with the user and put in reset and e-mail-change
 * tokens; it changes whenever the password or e-mail changes, which voids older tokens.
 * @internal
 */
export function newStamp(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const dummyHashes = new Map<number | undefined, Promise<string>>();

/**
 * Verifies `password` against `stored`; when there is no stored hash, does the same work
 * against a dummy hash and answers false, so unknown accounts cost the same time.
 * @internal
 */
export async function verifyOrDummy(
  password: string,
  stored: string | null | undefined,
  iterations: number | undefined,
): Promise<boolean> {
  if (typeof stored === "string" && stored.length > 0) {
    return await verifyPassword(password, stored);
  }
  let dummy = dummyHashes.get(iterations);
  if (!dummy) {
    dummy = hashPassword(newStamp(), { iterations });
    dummyHashes.set(iterations, dummy);
  }
  await verifyPassword(password, await dummy);
  return false;
}

/** Public view of a user. */
export interface User {
  /** User id. */
  id: string;
  /** E-mail address (lowercase). */
  email: string;
  /** Display name, or null. */
  name: string | null;
  /** True for administrators. */
  isAdmin: boolean;
  /** True once the e-mail address was verified. */
  emailVerified: boolean;
  /** True when the account has a password (OAuth-only accounts have none). */
  hasPassword: boolean;
  /** Creation time, milliseconds since the epoch. */
  createdAt: number;
}

/** The public view of a row. @internal */
export function publicUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name ?? null,
    isAdmin: Number(row.is_admin) === 1,
    emailVerified: Number(row.email_verified) === 1,
    hasPassword: typeof row.password_hash === "string" && row.password_hash.length > 0,
    createdAt: Number(row.created_at),
  };
}

/** Default freshness limit of a session used instead of the password, in seconds. */
export const DEFAULT_REAUTH_SECONDS = 300;

/**
 * Checks the current password of a signed-in user (password change, e-mail change, account
 * removal) through the re-authentication throttle: 5 wrong passwords per account, then waits
 * (stops the flow with `too_many_attempts`). Resolves to whether it is right. @internal
 */
export async function checkCurrentPassword(
  db: D1Database,
  row: UserRow,
  password: string,
  iterations: number | undefined,
  now: number,
): Promise<boolean> {
  const bucket = { kind: "reauth" as const, account: row.email, client: "", free: THROTTLE.reauth };
  await takeTry(db, [bucket], now);
  const ok = await verifyOrDummy(password, row.password_hash, iterations);
  if (ok) await clearTries(db, "reauth", row.email, "", now);
  return ok;
}

/**
 * Re-authentication for sensitive changes: the current password (checked against the row,
 * throttled), or a session issued less than `maxAgeSeconds` ago. Resolves to the error code,
 * or null. @internal
 */
export async function reauthError(
  db: D1Database,
  row: UserRow,
  o: Record<string, unknown>,
  now: number,
): Promise<"wrong_password" | "reauth_required" | "invalid_input" | null> {
  if (o.password !== undefined) {
    if (typeof o.password !== "string" || o.password.length > 4096) return "invalid_input";
    const ok = await checkCurrentPassword(
      db,
      row,
      o.password.normalize("NFKC"),
      typeof o.iterations === "number" ? o.iterations : undefined,
      now,
    );
    return ok ? null : "wrong_password";
  }
  const session = o.session as { issuedAt?: unknown } | undefined;
  const maxAge = o.maxSessionAgeSeconds === undefined
    ? DEFAULT_REAUTH_SECONDS
    : o.maxSessionAgeSeconds;
  if (typeof maxAge !== "number" || !(maxAge > 0)) return "invalid_input";
  if (
    session && typeof session === "object" && typeof session.issuedAt === "number" &&
    session.issuedAt * 1000 <= now + 5000 && now - session.issuedAt * 1000 < maxAge * 1000
  ) {
    return null;
  }
  // A recorded session where a factor was entered again lately (the step-up) counts as fresh.
  const id = (session as { id?: unknown } | undefined)?.id;
  if (session && typeof session === "object" && typeof id === "string" && id.length <= 256) {
    const at = await verifiedAt(db, row.id, id);
    if (at !== null && at <= now + 5000 && now - at < maxAge * 1000) return null;
  }
  return "reauth_required";
}

/** Options of the flows that need the user to re-authenticate. */
export interface ReauthOptions {
  /** The current password. When given, it is checked (and the session is not used). */
  password?: string;
  /**
   * A fresh session instead of the password: the core's `readSession` result (its `issuedAt`,
   * seconds since the epoch, must be less than `maxSessionAgeSeconds` old), or a recorded
   * session in which a factor was entered that recently (`stepUp`).
   */
  session?: { issuedAt: number; id?: string };
  /** Freshness limit for `session`, in seconds (default 300). */
  maxSessionAgeSeconds?: number;
}
