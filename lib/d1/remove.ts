/**
 * Deleting an account and telling its owner: what {@linkcode removeUser} does after its
 * re-authentication, shared with the operator's `adminRemoveUser` so both have the same
 * effects.
 *
 * @module
 */
import type { D1Database } from "./types.ts";
import type { EmailSender } from "./email.ts";
import { deliver } from "./email.ts";
import { fail } from "./errors.ts";
import { appNameOf } from "./input.ts";
import { batch, first, stmt } from "./query.ts";
import { accountDeletedEmail } from "./templates.ts";
import type { UserRow } from "./users.ts";

/** The tables whose rows belong to a user (`user_id`), deleted with the account. */
const USER_TABLES = [
  "oauth_identities",
  "totp_factors",
  "backup_codes",
  "trusted_devices",
  "passkeys",
  "passkey_challenges",
  "user_sessions",
  "auth_events",
] as const;

/**
 * Deletes the user's OAuth identities, second factors, codes and row in one transaction (`not_found` when the
 * row went meanwhile), then e-mails `accountDeletedEmail` (or the override). Resolves to
 * whether the notice was sent.
 *
 * With `keepAdmin`, each statement of that transaction also requires that the user is not an
 * administrator or another administrator exists: the check and the deletion are one atomic
 * write, so two deletions (or a deletion and a demotion) at once never leave no administrator.
 * Nothing is deleted when the condition fails (`last_admin`). @internal
 */
export async function deleteAccount(
  db: D1Database,
  user: UserRow,
  o: { send: EmailSender; render: unknown; appName: unknown; keepAdmin?: boolean },
): Promise<{ notified: boolean }> {
  // Inside the transaction nothing else writes, so the condition reads the same in every statement.
  const mayGo = o.keepAdmin
    ? ` AND EXISTS (SELECT 1 FROM users WHERE id = ? AND (is_admin <> 1
         OR EXISTS (SELECT 1 FROM users WHERE is_admin = 1 AND id <> ?)))`
    : "";
  const ids = o.keepAdmin ? [user.id, user.id] : [];
  const owned = USER_TABLES.map((table) =>
    stmt(db, `DELETE FROM ${table} WHERE user_id = ?${mayGo}`, user.id, ...ids)
  );
  const removed = (await batch(db, [
    ...owned,
    stmt(db, `DELETE FROM otp_codes WHERE email = ?${mayGo}`, user.email, ...ids),
    stmt(db, `DELETE FROM users WHERE id = ?${mayGo}`, user.id, ...ids),
  ])).at(-1);
  if (removed !== 1 && o.keepAdmin) {
    const now = await first<{ is_admin: number }>(
      db,
      "SELECT is_admin FROM users WHERE id = ?",
      user.id,
    );
    if (now && Number(now.is_admin) === 1) fail("last_admin");
  }
  if (removed !== 1) fail("not_found");
  try {
    await deliver(o.send, user.email, accountDeletedEmail, o.render, {
      email: user.email,
      appName: appNameOf(o.appName),
    });
    return { notified: true };
  } catch {
    return { notified: false };
  }
}
