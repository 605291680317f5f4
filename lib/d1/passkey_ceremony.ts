/**
 * Passkey ceremonies: each WebAuthn challenge is stored once, for the browser that holds its
 * **ceremony** token (a random value the site keeps in an HttpOnly cookie; the table holds
 * only its SHA-256) and, to add a passkey, for the session that asked. Taking it deletes it
 * in the same statement (`DELETE ... RETURNING`), so a challenge is answered at most once,
 * by that browser, within {@linkcode PASSKEY_CEREMONY_SECONDS}.
 *
 * @module
 */
import type { D1Database } from "./types.ts";
import { fail } from "./errors.ts";
import { first, run } from "./query.ts";
import { randomToken, tokenDigest } from "./sealed.ts";

/** Lifetime of a passkey ceremony (its challenge), in seconds. */
export const PASSKEY_CEREMONY_SECONDS = 300;

/** What a ceremony is for. @internal */
export type CeremonyPurpose = "register" | "sign-in";

/** Stores a challenge and answers the ceremony token. @internal */
export async function openCeremony(
  db: D1Database,
  o: {
    purpose: CeremonyPurpose;
    challenge: string;
    userId: string | null;
    sessionId: string | null;
    now: number;
  },
): Promise<string> {
  const ceremony = randomToken(32);
  await run(
    db,
    `INSERT INTO passkey_challenges (ceremony_hash, purpose, challenge, user_id, session_id, expires_at)
     VALUES (?, ?, ?, ?, ?, ?)`,
    [
      await tokenDigest(ceremony),
      o.purpose,
      o.challenge,
      o.userId,
      o.sessionId,
      o.now + PASSKEY_CEREMONY_SECONDS * 1000,
    ],
  );
  // Ceremonies nobody finished go after their lifetime (a few rows at a time).
  await run(
    db,
    `DELETE FROM passkey_challenges WHERE ceremony_hash IN
     (SELECT ceremony_hash FROM passkey_challenges WHERE expires_at <= ? LIMIT 20)`,
    [o.now],
  );
  return ceremony;
}

/**
 * Takes (deletes) the challenge of a ceremony of `purpose`, for `userId` and `sessionId` when
 * given; `invalid_challenge` when it is unknown, used, expired, or another's. @internal
 */
export async function takeCeremony(
  db: D1Database,
  o: {
    ceremony: string;
    purpose: CeremonyPurpose;
    userId?: string;
    sessionId?: string;
    now: number;
  },
): Promise<string> {
  if (o.ceremony.length < 20 || o.ceremony.length > 200) fail("invalid_challenge");
  const row = await first<{ challenge: string; user_id: string | null; session_id: string | null }>(
    db,
    `DELETE FROM passkey_challenges WHERE ceremony_hash = ? AND purpose = ? AND expires_at > ?
     RETURNING challenge, user_id, session_id`,
    await tokenDigest(o.ceremony),
    o.purpose,
    o.now,
  );
  if (!row) fail("invalid_challenge");
  if (o.userId !== undefined && row.user_id !== o.userId) fail("invalid_challenge");
  if (o.sessionId !== undefined && row.session_id !== o.sessionId) fail("invalid_challenge");
  return String(row.challenge);
}
