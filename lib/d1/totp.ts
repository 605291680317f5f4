/**
 * TOTP as a second factor: enrolment (a new key, its `otpauth://` URI for the QR code, then a
 * first code from the app confirms it and answers 10 single-use backup codes), new backup
 * codes, the factor's state for an account page, and its removal. Changing factors needs the
 * user to prove it is them (the password, or a session fresh as the site asks); a ticket of
 * `login`'s `second_factor_setup_required` answer stands for that in a first enrolment.
 *
 * @module
 */
import type { Secrets } from "../auth/token.ts";
import { base32Encode, generateTotpSecret, totpUri, verifyTotp } from "../auth/totp.ts";
import type { ClockOptions, HashingOptions } from "./input.ts";
import { clientOf, nowOf, params, secretOf, stringOf } from "./input.ts";
import type { CommonError, FlowResult } from "./errors.ts";
import { fail, guard } from "./errors.ts";
import { type EventOptions, report, type Seen, sinkOf } from "./events.ts";
import type { D1Database } from "./types.ts";
import { reauthError, type ReauthOptions, userById, type UserRow } from "./users.ts";
import { batch, first, run, stmt } from "./query.ts";
import { clearTries, takeTry } from "./throttle.ts";
import { keyedDigests, seal, unseal } from "./sealed.ts";
import {
  BACKUP_CODE_COUNT,
  BACKUP_PURPOSE,
  backupCodesLeft,
  factorBuckets,
  hasTotp,
  newBackupCode,
  ticketUser,
  TOTP_SEAL,
  type TrustedDevice,
  trustedDevicesOf,
} from "./second_factor.ts";

/** Who changes a factor: a signed-in user proving it again, or a setup ticket. */
export interface FactorActor extends ReauthOptions, HashingOptions {
  /** The signed-in user's id (with `password` or `session`). */
  userId?: string;
  /** Instead of `userId`: the ticket of `login`'s `second_factor_setup_required` answer. */
  ticket?: string;
}

/** The user acting, after the re-authentication (or the setup ticket). @internal */
async function actor(
  db: D1Database,
  o: Record<string, unknown>,
  secrets: Secrets,
  now: number,
): Promise<UserRow> {
  if (o.ticket !== undefined) {
    return await ticketUser(db, secrets, stringOf(o.ticket, 4096), "setup", now);
  }
  const user = await userById(db, stringOf(o.userId, 200));
  if (!user) fail("not_found");
  const denied = await reauthError(db, user, o, now);
  if (denied) fail(denied);
  return user;
}

/** Parameters of {@linkcode startTotpEnrolment}. */
export interface StartTotpEnrolmentParams extends FactorActor, ClockOptions {
  /** The site's `TOKEN_SECRET` (or a rotation list): seals the key at rest. */
  secret: Secrets;
  /** The site's name, shown in the authenticator app (no `:`). */
  issuer: string;
  /**
   * Answer the unconfirmed enrolment's key when there is one, instead of a new key: for the
   * page shown again after a wrong code, so that the QR code the user scanned stays the one
   * to confirm. Default false (every call starts over with a new key).
   */
  keepPending?: boolean;
}

/** Errors of the enrolment flows. */
export type TotpEnrolmentError =
  | CommonError
  | "not_found"
  | "invalid_token"
  | "wrong_password"
  | "reauth_required"
  | "too_many_attempts"
  | "factor_exists";

/**
 * Result of {@linkcode startTotpEnrolment}: the key in base32 (to type by hand) and the
 * `otpauth://` URI (for the QR code, see `totpQrSvg`).
 */
export type StartTotpEnrolmentResult = FlowResult<
  { userId: string; secret: string; uri: string },
  TotpEnrolmentError
>;

/**
 * Starts a TOTP enrolment: a new key, stored sealed and unconfirmed (replacing an unconfirmed
 * one) until {@linkcode confirmTotpEnrolment}; with `keepPending`, the unconfirmed key when
 * there is one. `factor_exists` when the account has a confirmed TOTP (remove it first).
 * Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, startTotpEnrolment, totpQrSvg } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await startTotpEnrolment(db, {
 *   userId: "5d0c...",
 *   password: "correct horse battery staple",
 *   secret: "TOKEN_SECRET value",
 *   issuer: "Example",
 * });
 * if (r.ok) console.log(r.secret, totpQrSvg(r.uri).length);
 * ```
 */
export function startTotpEnrolment(
  db: D1Database,
  p: StartTotpEnrolmentParams,
): Promise<StartTotpEnrolmentResult> {
  return guard(async () => {
    const o = params(p);
    const secrets = secretOf(o.secret);
    const issuer = stringOf(o.issuer, 200);
    if (!issuer || issuer.includes(":")) fail("invalid_input");
    if (o.keepPending !== undefined && typeof o.keepPending !== "boolean") fail("invalid_input");
    const now = nowOf(o.now);
    const user = await actor(db, o, secrets, now);
    const answer = (key: Uint8Array) => ({
      ok: true as const,
      userId: user.id,
      secret: base32Encode(key),
      uri: totpUri({ secret: key, account: user.email, issuer }),
    });
    if (o.keepPending === true) {
      const pending = await first<{ sealed_secret: string; confirmed: number }>(
        db,
        "SELECT sealed_secret, confirmed FROM totp_factors WHERE user_id = ?",
        user.id,
      );
      if (pending && Number(pending.confirmed) === 1) fail("factor_exists");
      const kept = pending && await unseal(secrets, TOTP_SEAL, user.id, pending.sealed_secret);
      // A key sealed under a secret no longer in the list cannot be shown: a new one follows.
      if (kept) return answer(kept);
    }
    const key = generateTotpSecret();
    const sealed = await seal(secrets, TOTP_SEAL, user.id, key);
    const changed = await run(
      db,
      `INSERT INTO totp_factors (user_id, sealed_secret, confirmed, last_step, created_at)
       VALUES (?, ?, 0, -1, ?)
       ON CONFLICT (user_id) DO UPDATE SET sealed_secret = excluded.sealed_secret,
         created_at = excluded.created_at, last_step = -1
       WHERE totp_factors.confirmed = 0`,
      [user.id, sealed, now],
    );
    if (changed !== 1) fail("factor_exists");
    return answer(key);
  });
}

/** Parameters of {@linkcode confirmTotpEnrolment}. */
export interface ConfirmTotpEnrolmentParams extends EventOptions, ClockOptions {
  /** The signed-in user's id (the enrolment was started for it). */
  userId?: string;
  /** Instead of `userId`: the setup ticket the enrolment was started with. */
  ticket?: string;
  /** The first code the app shows. */
  code: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
  /** The client's IP address or a device id, for the throttle. */
  client?: string;
}

/**
 * Result of {@linkcode confirmTotpEnrolment}: the 10 backup codes, shown once (only their
 * HMACs are stored), and the user (to sign in, when a setup ticket was used).
 */
export type ConfirmTotpEnrolmentResult = FlowResult<
  { userId: string; backupCodes: string[] },
  CommonError | "not_found" | "invalid_token" | "invalid_code" | "too_many_attempts"
>;

/**
 * Confirms an enrolment with a code of the app (current step ±1): the TOTP is then required
 * at every sign-in; answers 10 new backup codes (older ones stop working). `not_found` when
 * no enrolment was started. Throttled like sign-in codes. Never throws.
 *
 * @example
 * ```ts
 * import { confirmTotpEnrolment, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await confirmTotpEnrolment(db, { userId: "5d0c...", code: "123456", secret: "s" });
 * if (r.ok) console.log("print these:", r.backupCodes.join("\n"));
 * ```
 */
export async function confirmTotpEnrolment(
  db: D1Database,
  p: ConfirmTotpEnrolmentParams,
): Promise<ConfirmTotpEnrolmentResult> {
  const seen: Seen = { detail: { factor: "totp" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const secrets = secretOf(o.secret);
    const code = stringOf(o.code, 64);
    const client = clientOf(o.client);
    const now = nowOf(o.now);
    const user = o.ticket !== undefined
      ? await ticketUser(db, secrets, stringOf(o.ticket, 4096), "setup", now)
      : await userById(db, stringOf(o.userId, 200));
    if (!user) fail("not_found");
    seen.userId = user.id;
    const row = await first<{ sealed_secret: string }>(
      db,
      "SELECT sealed_secret FROM totp_factors WHERE user_id = ? AND confirmed = 0",
      user.id,
    );
    if (!row) fail("not_found");
    const account = `factor:${user.email}`;
    await takeTry(db, factorBuckets(account, client), now);
    const key = await unseal(secrets, TOTP_SEAL, user.id, row.sealed_secret);
    const step = key ? await verifyTotp(key, code, { now }) : null;
    if (step === null) fail("invalid_code");
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
    const [confirmed] = await batch(db, [
      stmt(
        db,
        `UPDATE totp_factors SET confirmed = 1, last_step = ?, confirmed_at = ?
         WHERE user_id = ? AND confirmed = 0 AND sealed_secret = ?`,
        step,
        now,
        user.id,
        row.sealed_secret,
      ),
      ...await backupCodeStatements(db, secrets, user.id, codes, now),
    ]);
    if (confirmed !== 1) fail("not_found");
    await clearTries(db, "factor", account, client, now);
    return { ok: true as const, userId: user.id, backupCodes: codes };
  });
  return await report(p, result, seen, (r) => (r.ok ? "factor.added" : null));
}

/** Statements replacing the user's backup codes with `codes`. */
async function backupCodeStatements(
  db: D1Database,
  secrets: Secrets,
  userId: string,
  codes: string[],
  now: number,
) {
  const hashes = await Promise.all(
    codes.map(async (c) =>
      (await keyedDigests(secrets, BACKUP_PURPOSE, `${userId}\u0000${c.replace("-", "")}`))[0]
    ),
  );
  return [
    stmt(db, "DELETE FROM backup_codes WHERE user_id = ?", userId),
    ...hashes.map((h) =>
      stmt(
        db,
        "INSERT INTO backup_codes (user_id, code_hash, created_at) VALUES (?, ?, ?)",
        userId,
        h,
        now,
      )
    ),
  ];
}

/** Parameters of {@linkcode regenerateBackupCodes}. */
export interface RegenerateBackupCodesParams
  extends EventOptions, ReauthOptions, HashingOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
}

/** Result of {@linkcode regenerateBackupCodes}. */
export type RegenerateBackupCodesResult = FlowResult<
  { backupCodes: string[] },
  CommonError | "not_found" | "wrong_password" | "reauth_required" | "too_many_attempts"
>;

/**
 * Replaces the user's backup codes with 10 new ones (the old ones stop working); needs a
 * confirmed TOTP (`not_found` otherwise) and the re-authentication. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, regenerateBackupCodes } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await regenerateBackupCodes(db, { userId: "5d0c...", password: "pw", secret: "s" });
 * ```
 */
export async function regenerateBackupCodes(
  db: D1Database,
  p: RegenerateBackupCodesParams,
): Promise<RegenerateBackupCodesResult> {
  const seen: Seen = { detail: { factor: "totp" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const secrets = secretOf(o.secret);
    const now = nowOf(o.now);
    const user = await actor(db, { ...o, ticket: undefined }, secrets, now);
    seen.userId = user.id;
    if (!(await hasTotp(db, user.id))) fail("not_found");
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
    await batch(db, await backupCodeStatements(db, secrets, user.id, codes, now));
    return { ok: true as const, backupCodes: codes };
  });
  return await report(p, result, seen, (r) => (r.ok ? "backup_codes.regenerated" : null));
}

/** The second factors of an account, for its page. */
export interface SecondFactors {
  /** Whether a TOTP is confirmed (required at sign-in). */
  totp: boolean;
  /** When it was confirmed, ms since the epoch, or null. */
  totpSince: number | null;
  /** Unused backup codes. */
  backupCodesLeft: number;
  /** Devices that skip the second step. */
  trustedDevices: TrustedDevice[];
}

/** Result of {@linkcode getSecondFactors}. */
export type GetSecondFactorsResult = FlowResult<{ factors: SecondFactors }, CommonError>;

/**
 * The state of an account's second factor. Never throws.
 *
 * @example
 * ```ts
 * import { getSecondFactors, openLibsql } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * const r = await getSecondFactors(db, { userId: "5d0c..." });
 * if (r.ok) console.log(r.factors.totp, r.factors.backupCodesLeft);
 * ```
 */
export function getSecondFactors(
  db: D1Database,
  p: { userId: string } & ClockOptions,
): Promise<GetSecondFactorsResult> {
  return guard(async () => {
    const o = params(p);
    const userId = stringOf(o.userId, 200);
    const now = nowOf(o.now);
    const row = await first<{ confirmed_at: number | null }>(
      db,
      "SELECT confirmed_at FROM totp_factors WHERE user_id = ? AND confirmed = 1",
      userId,
    );
    return {
      ok: true as const,
      factors: {
        totp: row !== null,
        totpSince: row?.confirmed_at == null ? null : Number(row.confirmed_at),
        backupCodesLeft: row ? await backupCodesLeft(db, userId) : 0,
        trustedDevices: row ? await trustedDevicesOf(db, userId, now) : [],
      },
    };
  });
}

/** Parameters of {@linkcode removeTotp}. */
export interface RemoveTotpParams
  extends EventOptions, ReauthOptions, HashingOptions, ClockOptions {
  /** The signed-in user's id. */
  userId: string;
  /** The site's `TOKEN_SECRET` (or a rotation list). */
  secret: Secrets;
}

/** Result of {@linkcode removeTotp}: whether there was a TOTP to remove. */
export type RemoveTotpResult = FlowResult<
  { removed: boolean },
  CommonError | "not_found" | "wrong_password" | "reauth_required" | "too_many_attempts"
>;

/**
 * Removes the user's TOTP, its backup codes and its trusted devices, after the
 * re-authentication. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, removeTotp } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await removeTotp(db, { userId: "5d0c...", password: "pw", secret: "s" });
 * ```
 */
export async function removeTotp(db: D1Database, p: RemoveTotpParams): Promise<RemoveTotpResult> {
  const seen: Seen = { detail: { factor: "totp" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    const secrets = secretOf(o.secret);
    const now = nowOf(o.now);
    const user = await actor(db, { ...o, ticket: undefined }, secrets, now);
    seen.userId = user.id;
    const [removed] = await clearSecondFactor(db, user.id);
    return { ok: true as const, removed: removed === 1 };
  });
  return await report(p, result, seen, (r) => (r.ok && r.removed ? "factor.removed" : null));
}

/** Deletes every second-factor row of a user in one batch; the TOTP's count first. @internal */
export function clearSecondFactor(db: D1Database, userId: string): Promise<number[]> {
  return batch(db, [
    stmt(db, "DELETE FROM totp_factors WHERE user_id = ?", userId),
    stmt(db, "DELETE FROM backup_codes WHERE user_id = ?", userId),
    stmt(db, "DELETE FROM trusted_devices WHERE user_id = ?", userId),
  ]);
}

/** Result of {@linkcode resetSecondFactor}. */
export type ResetSecondFactorResult = FlowResult<{ removed: boolean }, CommonError>;

/**
 * For a site's administrators: removes a user's TOTP, backup codes and trusted devices, the
 * recovery of someone who lost the app and every backup code (check who asks, out of band,
 * first). Does not check who calls it. Never throws.
 *
 * @example
 * ```ts
 * import { openLibsql, resetSecondFactor } from "@gatehouse/gatehouse/d1";
 * const db = openLibsql("file:.data/site.db");
 * await resetSecondFactor(db, { userId: "5d0c..." });
 * ```
 */
export async function resetSecondFactor(
  db: D1Database,
  p: { userId: string } & EventOptions,
): Promise<ResetSecondFactorResult> {
  const seen: Seen = { detail: { factor: "totp", by: "operator" } };
  const result = await guard(async () => {
    const o = params(p);
    sinkOf(o.onEvent);
    seen.userId = stringOf(o.userId, 200);
    const [removed] = await clearSecondFactor(db, seen.userId);
    return { ok: true as const, removed: removed === 1 };
  });
  return await report(p, result, seen, (r) => (r.ok && r.removed ? "factor.removed" : null));
}
