/**
 * The second step of a sign-in. `login` answers `second_factor_required` with a **ticket**
 * (a token signed with `TOKEN_SECRET`, purpose `gatehouse.second-factor`, 5 minutes, bound to
 * the user's security stamp) when the account has a confirmed TOTP and the browser is not a
 * trusted device; {@linkcode verifySecondFactor} takes the ticket and a TOTP code or a backup
 * code and answers the user id to sign in. With `requireSecondFactor`, `login` answers
 * `second_factor_setup_required` and a ticket for enrolment instead, for accounts without one.
 *
 * Every check is counted first by the throttle, with the limits of password sign-in (kind
 * `factor`, per account and client, per client, per account for clients not known to it). A
 * TOTP code is accepted once: the time step it matched is stored and a code of that step or
 * an older one is refused (one atomic UPDATE). "Remember this device" stores only the SHA-256
 * of a random device token.
 *
 * @module
 */
import { type Secrets, signToken, verifyToken } from "../auth/token.ts";
import { verifyTotp } from "../auth/totp.ts";
import type { ClockOptions } from "./input.ts";
import { clientOf, nowOf, params, secretOf, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import { userById, type UserRow } from "./users.ts";
import { all, first, run } from "./query.ts";
import { clearTries, signInBuckets, takeTry } from "./throttle.ts";
import { keyedDigests, randomToken, tokenDigest, unseal } from "./sealed.ts";

const TICKET = "gatehouse.second-factor";
/** Lifetime of a second-factor ticket, in seconds. */
export const SECOND_FACTOR_TICKET_SECONDS = 300;
/** Default and longest life of a trusted device ("remember this device"), in days. */
export const TRUSTED_DEVICE_DAYS: { readonly default: number; readonly max: number } = Object
  .freeze({ default: 30, max: 365 });
/** Seal purpose of TOTP keys. @internal */
export const TOTP_SEAL = "gatehouse.totp-key";
/** HMAC purpose of backup codes. @internal */
export const BACKUP_PURPOSE = "gatehouse.backup-code";

/** What a ticket lets its holder do: finish a sign-in, or enrol a first factor. @internal */
export type TicketKind = "verify" | "setup";

/** A ticket for `user`. @internal */
export function issueTicket(
  secrets: Secrets,
  user: { id: string; stamp: string },
  kind: TicketKind,
  now: number,
): Promise<string> {
  return signToken(secrets, {
    purpose: TICKET,
    payload: { u: user.id, s: user.stamp, k: kind },
    ttlSeconds: SECOND_FACTOR_TICKET_SECONDS,
    now,
  });
}

/** The user of a ticket of `kind`, or `invalid_token` (forged, expired, stale). @internal */
export async function ticketUser(
  db: D1Database,
  secrets: Secrets,
  ticket: string,
  kind: TicketKind,
  now: number,
): Promise<UserRow> {
  const claims = await verifyToken<{ u?: unknown; s?: unknown; k?: unknown }>(secrets, ticket, {
    purpose: TICKET,
    now,
  });
  const { u, s, k } = claims?.payload ?? {};
  if (typeof u !== "string" || typeof s !== "string" || k !== kind) fail("invalid_token");
  const user = await userById(db, u);
  if (!user || user.stamp !== s || Number(user.email_verified) !== 1) fail("invalid_token");
  return user;
}

/** The throttle buckets of second-factor checks (password sign-in's limits). @internal */
export function factorBuckets(account: string, client: string) {
  return signInBuckets(account, client).map((b) => ({
    ...b,
    kind: "factor" as const,
    unlessKnown: b.unlessKnown,
  }));
}

/** Whether the user has a confirmed TOTP. @internal */
export async function hasTotp(db: D1Database, userId: string): Promise<boolean> {
  return (await first(
    db,
    "SELECT 1 AS x FROM totp_factors WHERE user_id = ? AND confirmed = 1",
    userId,
  )) !== null;
}

/** Whether `token` is a live trusted device of the user; refreshes its last use. @internal */
export async function deviceTrusted(
  db: D1Database,
  userId: string,
  token: unknown,
  now: number,
): Promise<boolean> {
  if (typeof token !== "string" || token.length < 20 || token.length > 200) return false;
  const changed = await run(
    db,
    `UPDATE trusted_devices SET last_used_at = ?
     WHERE token_hash = ? AND user_id = ? AND expires_at > ?`,
    [now, await tokenDigest(token), userId, now],
  );
  return changed === 1;
}

/**
 * What `login` does after the password was right: `null` to sign in, or the answer that asks
 * for the second step. @internal
 */
export async function secondStep(
  db: D1Database,
  o: Record<string, unknown>,
  user: { id: string },
  now: number,
): Promise<SecondFactorNeeded | null> {
  const totp = await hasTotp(db, user.id);
  if (!totp && o.requireSecondFactor !== true) return null;
  if (totp && await deviceTrusted(db, user.id, o.trustedDevice, now)) return null;
  const error = totp ? "second_factor_required" : "second_factor_setup_required";
  // Without the secret no ticket can be signed: the account still does not sign in.
  if (o.secret === undefined) return { ok: false, error };
  const row = await userById(db, user.id);
  if (!row) fail("invalid_credentials");
  const ticket = await issueTicket(secretOf(o.secret), row, totp ? "verify" : "setup", now);
  return { ok: false, error, ticket };
}

/**
 * `login`'s answer when the password was right but a second step is due: pass `ticket` to
 * {@linkcode verifySecondFactor} (`second_factor_required`) or to the TOTP enrolment flows
 * (`second_factor_setup_required`). Keep it in the browser (an HttpOnly cookie); it lives
 * {@linkcode SECOND_FACTOR_TICKET_SECONDS}. Absent when `login` was not given `secret`.
 */
export interface SecondFactorNeeded {
  /** Always false: the user is not signed in yet. */
  ok: false;
  /** Which second step is due. */
  error: "second_factor_required" | "second_factor_setup_required";
  /** The ticket of the second step. */
  ticket?: string;
  /** Never set here (as on a failure that waiting does not help). */
  retryAfter?: undefined;
}

/** Parameters of {@linkcode verifySecondFactor}. */
export interface VerifySecondFactorParams extends EventOptions, ClockOptions {
  /** The ticket from `login`'s `second_factor_required` answer. */
  ticket: string;
  /** A 6-digit code of the authenticator app, or one of the backup codes. */
  code: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The client's IP address or a device id, for the throttle (as for `login`). */
  client?: string;
  /** Trust this browser: answer a `deviceToken` that skips the second step next time. */
  rememberDevice?: boolean;
  /** Days the device stays trusted (1 to 365; default 30). */
  rememberDays?: number;
  /** A name for the trusted device, e.g. from the user agent (at most 200 characters). */
  deviceLabel?: string;
}

/** Errors of {@linkcode verifySecondFactor}. */
export type VerifySecondFactorError =
  | CommonError
  | "invalid_token"
  | "invalid_code"
  | "too_many_attempts";

/**
 * Result of {@linkcode verifySecondFactor}: the user to sign in, how (`totp` or `backup`), the
 * backup codes left, and with `rememberDevice` the device token to keep in a long-lived
 * HttpOnly cookie and pass to `login` as `trustedDevice`.
 */
export type VerifySecondFactorResult = FlowResult<{
  userId: string;
  method: "totp" | "backup";
  backupCodesLeft: number;
  deviceToken?: string;
}, VerifySecondFactorError>;

/**
 * The second step of a sign-in: a TOTP code (current step ±1, each accepted once) or an
 * unused backup code (then spent). Throttled like passwords. Never throws.
 *
 * @example
 * ```ts
 * import { login, openLibsql, verifySecondFactor } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const secret = "TOKEN_SECRET value";
 * const l = await login(db, { email: "ada@example.com", password: "correct horse", secret });
 * if (!l.ok && l.error === "second_factor_required" && "ticket" in l && l.ticket) {
 *   const v = await verifySecondFactor(db, { ticket: l.ticket, code: "123456", secret });
 *   if (v.ok) console.log("sign in", v.userId);
 * }
 * ```
 */
export async function verifySecondFactor(
  db: D1Database,
  p: VerifySecondFactorParams,
): Promise<VerifySecondFactorResult> {
  const seen: Seen = { detail: { step: "second_factor" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const secrets = secretOf(o.secret);
    const ticket = stringOf(o.ticket, 4096);
    const code = stringOf(o.code, 64);
    const client = clientOf(o.client);
    const now = nowOf(o.now);
    const remember = o.rememberDevice === undefined ? false : o.rememberDevice;
    if (typeof remember !== "boolean") fail("invalid_input");
    const days = o.rememberDays === undefined ? TRUSTED_DEVICE_DAYS.default : o.rememberDays;
    if (!Number.isInteger(days) || (days as number) < 1 || (days as number) > 365) {
      fail("invalid_input");
    }
    const label = o.deviceLabel === undefined ? null : stringOf(o.deviceLabel, 200);
    const user = await ticketUser(db, secrets, ticket, "verify", now);
    seen.userId = user.id;
    seen.email = user.email;
    const account = `factor:${user.email}`;
    await takeTry(db, factorBuckets(account, client), now);
    const method = await checkFactorCode(db, secrets, user.id, code, now);
    if (!method) fail("invalid_code");
    seen.detail = { ...seen.detail, method, ...(remember ? { rememberDevice: true } : {}) };
    await clearTries(db, "factor", account, client, now);
    const deviceToken = remember
      ? await trustDevice(db, user.id, days as number, label, now)
      : undefined;
    const left = await backupCodesLeft(db, user.id);
    return {
      ok: true as const,
      userId: user.id,
      method,
      backupCodesLeft: left,
      ...(deviceToken ? { deviceToken } : {}),
    };
  });
  return await report(
    p,
    result,
    seen,
    (r) =>
      r.ok
        ? "sign_in.succeeded"
        : r.error === "too_many_attempts"
        ? "sign_in.throttled"
        : r.error === "invalid_code" || r.error === "invalid_token"
        ? "sign_in.failed"
        : null,
  );
}

/**
 * Checks a TOTP code (spending its step) or a backup code (spending it) of a user with a
 * confirmed TOTP. Resolves to the method that matched, or null. @internal
 */
export async function checkFactorCode(
  db: D1Database,
  secrets: Secrets,
  userId: string,
  code: string,
  now: number,
): Promise<"totp" | "backup" | null> {
  const typed = code.replace(/\s+/g, "");
  if (/^[0-9]{6}$/.test(typed)) {
    const row = await first<{ sealed_secret: string; last_step: number }>(
      db,
      "SELECT sealed_secret, last_step FROM totp_factors WHERE user_id = ? AND confirmed = 1",
      userId,
    );
    if (!row) return null;
    const key = await unseal(secrets, TOTP_SEAL, userId, row.sealed_secret);
    if (!key) return null;
    const step = await verifyTotp(key, typed, { now });
    if (step === null || step <= Number(row.last_step)) return null;
    // Accepted once: a concurrent use of the same code (or a newer one first) wins.
    const spent = await run(
      db,
      "UPDATE totp_factors SET last_step = ? WHERE user_id = ? AND confirmed = 1 AND last_step < ?",
      [step, userId, step],
    );
    return spent === 1 ? "totp" : null;
  }
  const normal = normalizeBackupCode(code);
  if (!normal) return null;
  const hashes = await keyedDigests(secrets, BACKUP_PURPOSE, `${userId}\u0000${normal}`);
  const spent = await run(
    db,
    `UPDATE backup_codes SET used_at = ? WHERE user_id = ? AND used_at IS NULL
     AND code_hash IN (${hashes.map(() => "?").join(", ")})`,
    [now, userId, ...hashes],
  );
  return spent === 1 ? "backup" : null;
}

/** Alphabet of backup codes: digits and lowercase letters without i, l, o, u. */
const BACKUP_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
/** Number of backup codes a user gets. */
export const BACKUP_CODE_COUNT = 10;

/** A new backup code, `xxxxx-xxxxx` (50 random bits). @internal */
export function newBackupCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  const chars = Array.from(bytes, (b) => BACKUP_ALPHABET[b & 31]);
  return `${chars.slice(0, 5).join("")}-${chars.slice(5).join("")}`;
}

/** A typed backup code in its stored form (10 characters), or null. @internal */
export function normalizeBackupCode(code: string): string | null {
  const s = code.toLowerCase().replace(/[\s-]+/g, "").replace(/[il]/g, "1").replace(/o/g, "0");
  if (s.length !== 10) return null;
  for (const c of s) if (!BACKUP_ALPHABET.includes(c)) return null;
  return s;
}

/** Unused backup codes of a user. @internal */
export async function backupCodesLeft(db: D1Database, userId: string): Promise<number> {
  const row = await first<{ n: number }>(
    db,
    "SELECT count(*) AS n FROM backup_codes WHERE user_id = ? AND used_at IS NULL",
    userId,
  );
  return Number(row?.n ?? 0);
}

/** Records a trusted device and answers its token. @internal */
export async function trustDevice(
  db: D1Database,
  userId: string,
  days: number,
  label: string | null,
  now: number,
): Promise<string> {
  const token = randomToken(32);
  await run(
    db,
    `INSERT INTO trusted_devices (token_hash, user_id, label, created_at, last_used_at, expires_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
    [await tokenDigest(token), userId, label, now, now, now + days * 86_400_000],
  );
  return token;
}

/** A device that skips the second factor. */
export interface TrustedDevice {
  /** An id for {@linkcode forgetTrustedDevice} (a prefix of the token's digest, not the token). */
  id: string;
  /** The label given when it was trusted, or null. */
  label: string | null;
  /** When it was trusted, ms since the epoch. */
  createdAt: number;
  /** Its last sign-in, ms since the epoch. */
  lastUsedAt: number;
  /** When it stops being trusted, ms since the epoch. */
  expiresAt: number;
}

/** The user's live trusted devices, newest first. @internal */
export async function trustedDevicesOf(
  db: D1Database,
  userId: string,
  now: number,
): Promise<TrustedDevice[]> {
  const rows = await all<{
    token_hash: string;
    label: string | null;
    created_at: number;
    last_used_at: number;
    expires_at: number;
  }>(
    db,
    `SELECT token_hash, label, created_at, last_used_at, expires_at FROM trusted_devices
     WHERE user_id = ? AND expires_at > ? ORDER BY created_at DESC`,
    userId,
    now,
  );
  return rows.map((r) => ({
    id: String(r.token_hash).slice(0, 16),
    label: r.label === null ? null : String(r.label),
    createdAt: Number(r.created_at),
    lastUsedAt: Number(r.last_used_at),
    expiresAt: Number(r.expires_at),
  }));
}
