/**
 * Signup attempts: what binds a signup code to the password of the signup that asked for it.
 *
 * A signup stores its password hash as the address's pending password (`otp_codes`, purpose
 * `signup`) and answers an **attempt**: an HMAC under `TOKEN_SECRET` of the address and that
 * pending hash. The site keeps the attempt in the browser that signed up (an HttpOnly cookie)
 * and passes it to `verifyOtp` and `resendOtp`. The code e-mailed for a signup is an HMAC over
 * the address, the code **and the pending hash**, so verifying needs both the inbox (the code)
 * and the browser that typed the password (the attempt), and confirms exactly that password:
 *
 * - a later signup of the same address replaces the pending password (the latest signup
 *   wins); the code sent for an earlier signup then verifies nothing, and a code sent for the
 *   later signup cannot confirm the earlier password;
 * - a signup inside the resend throttle replaces the pending password but sends no e-mail:
 *   its code comes with `resendOtp` once the throttle allows.
 *
 * Salts are random, so every signup has its own pending hash and its own attempt, even with
 * the same password. Nothing new is stored: the pending hash identifies the attempt.
 *
 * @module
 */
import type { Secrets } from "../auth/token.ts";
import { b64urlDecode, b64urlEncode } from "../auth/_encoding.ts";
import type { D1Database, D1PreparedStatement } from "./types.ts";
import { first, run, stmt } from "./query.ts";
import { signingSecret } from "./input.ts";
import { codeMac, generateCode, OTP_RESEND_SECONDS, OTP_TTL_MINUTES } from "./otp.ts";

/** Purpose of signup codes in `otp_codes`. @internal */
export const SIGNUP = "signup";

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

function message(email: string, pendingHash: string): Uint8Array<ArrayBuffer> {
  return enc.encode(`gatehouse-signup-attempt\u0000${email}\u0000${pendingHash}`);
}

/** The attempt of the signup whose pending password hash is `pendingHash`. @internal */
export async function attemptFor(
  secrets: Secrets,
  email: string,
  pendingHash: string,
): Promise<string> {
  const sig = await crypto.subtle.sign(
    "HMAC",
    await key(signingSecret(secrets)),
    message(email, pendingHash),
  );
  return b64urlEncode(new Uint8Array(sig));
}

/**
 * An attempt that belongs to no signup, for addresses that already have a verified account:
 * the same length and the same work as a real one, so the answer tells nothing. @internal
 */
export function decoyAttempt(secrets: Secrets, email: string): Promise<string> {
  const nonce = b64urlEncode(crypto.getRandomValues(new Uint8Array(32)));
  return attemptFor(secrets, email, `decoy:${nonce}`);
}

/** Whether `attempt` is the attempt of `pendingHash` under any of the secrets. @internal */
export async function attemptMatches(
  secrets: Secrets,
  email: string,
  pendingHash: string,
  attempt: string,
): Promise<boolean> {
  const sig = b64urlDecode(attempt);
  if (!sig || sig.length !== 32) return false;
  const list = typeof secrets === "string" ? [secrets] : secrets;
  let ok = false;
  for (const s of list) {
    ok = await crypto.subtle.verify("HMAC", await key(s), sig, message(email, pendingHash)) || ok;
  }
  return ok;
}

/**
 * The statement that records a signup of an address whose account is still unverified (none
 * when it is verified: then it writes nothing): its hash becomes the pending password in every
 * case; the code whose HMAC (bound to the hash) is `mac` is stored (tries reset) unless a code
 * was sent less than `OTP_RESEND_SECONDS` ago. One atomic upsert, returning the stored
 * `code_hash`: `mac` when the code is to be e-mailed. Run in the batch that creates the user,
 * after its INSERT. @internal
 */
export function signupAttemptStatement(
  db: D1Database,
  o: { email: string; pendingHash: string; mac: string; now: number },
): D1PreparedStatement {
  const due = o.now - OTP_RESEND_SECONDS * 1000;
  // Every SET expression reads the row as it was before the statement.
  return stmt(
    db,
    `INSERT INTO otp_codes (email, purpose, code_hash, password_hash, attempts, sent_at, expires_at)
     SELECT ?, '${SIGNUP}', ?, ?, 0, ?, ?
     WHERE EXISTS (SELECT 1 FROM users WHERE email = ? AND email_verified = 0)
     ON CONFLICT (email, purpose) DO UPDATE SET
       password_hash = excluded.password_hash,
       code_hash = CASE WHEN otp_codes.sent_at <= ? THEN excluded.code_hash ELSE otp_codes.code_hash END,
       attempts = CASE WHEN otp_codes.sent_at <= ? THEN 0 ELSE otp_codes.attempts END,
       expires_at = CASE WHEN otp_codes.sent_at <= ? THEN excluded.expires_at ELSE otp_codes.expires_at END,
       sent_at = CASE WHEN otp_codes.sent_at <= ? THEN excluded.sent_at ELSE otp_codes.sent_at END
     RETURNING code_hash`,
    o.email,
    o.mac,
    o.pendingHash,
    o.now,
    o.now + OTP_TTL_MINUTES * 60_000,
    o.email,
    due,
    due,
    due,
    due,
  );
}

/**
 * A fresh code for the pending signup whose attempt is `attempt` (throttled like every code).
 * Resolves to the code to e-mail, or null when the attempt is not the address's current one,
 * or when throttled. @internal
 */
export async function renewSignupCode(
  db: D1Database,
  o: { email: string; attempt: string; secrets: Secrets; now: number },
): Promise<string | null> {
  const row = await first<{ password_hash: string | null }>(
    db,
    `SELECT password_hash FROM otp_codes WHERE email = ? AND purpose = '${SIGNUP}'`,
    o.email,
  );
  const pending = row?.password_hash;
  if (typeof pending !== "string" || !pending) return null;
  if (!(await attemptMatches(o.secrets, o.email, pending, o.attempt))) return null;
  const code = generateCode();
  const mac = await codeMac(signingSecret(o.secrets), SIGNUP, o.email, code, pending);
  // Only while that signup is still the pending one: a signup in between wins.
  const changed = await run(
    db,
    `UPDATE otp_codes SET code_hash = ?, attempts = 0, sent_at = ?, expires_at = ?
     WHERE email = ? AND purpose = '${SIGNUP}' AND password_hash = ? AND sent_at <= ?`,
    [
      mac,
      o.now,
      o.now + OTP_TTL_MINUTES * 60_000,
      o.email,
      pending,
      o.now - OTP_RESEND_SECONDS * 1000,
    ],
  );
  return changed === 1 ? code : null;
}
