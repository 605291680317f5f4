/**
 * One-time codes: 6 digits drawn from the crypto RNG without bias, stored only as an
 * HMAC-SHA256 under the site's secret, valid for `OTP_TTL_MINUTES`, at most
 * `OTP_MAX_ATTEMPTS` tries (each try is counted before the code is compared, atomically, so
 * concurrent guesses cannot exceed it), deleted on first successful use, and re-sent at most
 * once per `OTP_RESEND_SECONDS` per address and purpose.
 *
 * @module
 */
import type { Secrets } from "../auth/token.ts";
import type { D1Database } from "./types.ts";
import { fail } from "./errors.ts";
import { first, run } from "./query.ts";
import { signingSecret } from "./input.ts";

/** Lifetime of a one-time code, in minutes. */
export const OTP_TTL_MINUTES = 10;
/** Tries allowed per code; the next one fails even with the right code. */
export const OTP_MAX_ATTEMPTS = 5;
/** Shortest interval between two codes (or notices) sent to one address, in seconds. */
export const OTP_RESEND_SECONDS = 60;

/** A uniformly random 6-digit code from `crypto.getRandomValues`. @internal */
export function generateCode(): string {
  const limit = 4_294_000_000; // largest multiple of 10^6 below 2^32: no modulo bias
  const buf = new Uint32Array(1);
  for (;;) {
    crypto.getRandomValues(buf);
    if (buf[0] < limit) return String(buf[0] % 1_000_000).padStart(6, "0");
  }
}

const enc = new TextEncoder();

function key(secret: string): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
}

function message(
  purpose: string,
  email: string,
  code: string,
  bind: string | undefined,
): Uint8Array<ArrayBuffer> {
  const bound = bind === undefined ? "" : `\u0000${bind}`;
  return enc.encode(`gatehouse-otp\u0000${purpose}\u0000${email}\u0000${code}${bound}`);
}

/**
 * HMAC of a code (hex); the code itself is never stored. `bind` ties the code to a value (a
 * signup's pending password hash): the code then verifies only together with that value.
 * @internal
 */
export async function codeMac(
  secret: string,
  purpose: string,
  email: string,
  code: string,
  bind?: string,
): Promise<string> {
  const sig = await crypto.subtle.sign(
    "HMAC",
    await key(secret),
    message(purpose, email, code, bind),
  );
  return Array.from(new Uint8Array(sig), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compares a code with its stored HMAC under any of the secrets, in constant time. */
async function macMatches(
  secrets: Secrets,
  purpose: string,
  email: string,
  code: string,
  stored: string,
  bind: string | undefined,
): Promise<boolean> {
  if (!/^[0-9a-f]{64}$/.test(stored)) return false;
  const sig = new Uint8Array(32);
  for (let i = 0; i < 32; i++) sig[i] = parseInt(stored.slice(i * 2, i * 2 + 2), 16);
  const list = typeof secrets === "string" ? [secrets] : secrets;
  let ok = false;
  for (const s of list) {
    const input = message(purpose, email, code, bind);
    ok = await crypto.subtle.verify("HMAC", await key(s), sig, input) || ok;
  }
  return ok;
}

/** What `issueCode` stores besides the code. @internal */
export interface IssueOptions {
  email: string;
  purpose: string;
  secrets: Secrets;
  now: number;
}

/**
 * Stores a fresh code for (email, purpose) unless one was sent less than
 * `OTP_RESEND_SECONDS` ago; one atomic upsert, so concurrent calls issue one code.
 * Resolves to the code, or null when throttled. @internal
 */
export async function issueCode(db: D1Database, o: IssueOptions): Promise<string | null> {
  const code = generateCode();
  const mac = await codeMac(signingSecret(o.secrets), o.purpose, o.email, code);
  const changed = await run(
    db,
    `INSERT INTO otp_codes (email, purpose, code_hash, password_hash, attempts, sent_at, expires_at)
     VALUES (?, ?, ?, NULL, 0, ?, ?)
     ON CONFLICT (email, purpose) DO UPDATE SET code_hash = excluded.code_hash,
       password_hash = NULL, attempts = 0, sent_at = excluded.sent_at,
       expires_at = excluded.expires_at
     WHERE otp_codes.sent_at <= ?`,
    [
      o.email,
      o.purpose,
      mac,
      o.now,
      o.now + OTP_TTL_MINUTES * 60_000,
      o.now - OTP_RESEND_SECONDS * 1000,
    ],
  );
  return changed === 1 ? code : null;
}

/** Lifts the resend throttle of a code whose e-mail could not be sent. @internal */
export async function releaseCode(db: D1Database, email: string, purpose: string): Promise<void> {
  await run(db, "UPDATE otp_codes SET sent_at = 0 WHERE email = ? AND purpose = ?", [
    email,
    purpose,
  ]).catch(() => 0);
}

/** What `consumeCode` checks. @internal */
export interface ConsumeOptions {
  email: string;
  purpose: string;
  code: string;
  secrets: Secrets;
  now: number;
  /**
   * For codes bound to their pending password hash (signup): accepts the pending hash when the
   * caller holds its attempt. The code is then compared bound to that hash.
   */
  attempt?: (pendingHash: string) => Promise<boolean>;
}

/**
 * Checks a code: counts the try (refusing once `OTP_MAX_ATTEMPTS` were used), then compares,
 * then deletes the row so the code works once. With `attempt`, a caller that does not hold the
 * pending signup's attempt gets `invalid_code` before anything is counted, as for an address
 * without a code: the code's tries, expiry and limit show only to the browser that signed up
 * (else anyone could learn that an address has a pending signup, and use up its tries).
 * Resolves to the pending password hash stored with it (or null); stops with `invalid_code`,
 * `expired_code` or `too_many_attempts`. @internal
 */
export async function consumeCode(db: D1Database, o: ConsumeOptions): Promise<string | null> {
  type Row = { code_hash: string; password_hash: string | null; expires_at: number };
  const read = () =>
    first<Row>(
      db,
      "SELECT code_hash, password_hash, expires_at FROM otp_codes WHERE email = ? AND purpose = ?",
      o.email,
      o.purpose,
    );
  const row = await read();
  const pending = row && typeof row.password_hash === "string" && row.password_hash
    ? row.password_hash
    : null;
  let bind: string | undefined;
  if (o.attempt) {
    // the same work whether or not the address has a pending code
    const holder = await o.attempt(pending ?? "");
    if (!row || pending === null || !holder) return fail("invalid_code");
    bind = pending;
  }
  if (!row) return fail("invalid_code");
  // counted on the row as read: a signup that replaced it meanwhile is another code
  const counted = await run(
    db,
    `UPDATE otp_codes SET attempts = attempts + 1
     WHERE email = ? AND purpose = ? AND code_hash = ? AND attempts < ? AND expires_at > ?`,
    [o.email, o.purpose, row.code_hash, OTP_MAX_ATTEMPTS, o.now],
  );
  if (counted !== 1) {
    const again = await read();
    if (!again || again.code_hash !== row.code_hash) return fail("invalid_code");
    return fail(Number(again.expires_at) <= o.now ? "expired_code" : "too_many_attempts");
  }
  if (!/^[0-9]{6}$/.test(o.code)) return fail("invalid_code");
  const stored = String(row.code_hash);
  if (!(await macMatches(o.secrets, o.purpose, o.email, o.code, stored, bind))) {
    return fail("invalid_code");
  }
  // The row as it was checked: a signup that replaced the pending password meanwhile wins.
  const used = await run(
    db,
    "DELETE FROM otp_codes WHERE email = ? AND purpose = ? AND code_hash = ? AND password_hash IS ?",
    [o.email, o.purpose, row.code_hash, row.password_hash ?? null],
  );
  if (used !== 1) return fail("invalid_code");
  return pending;
}
