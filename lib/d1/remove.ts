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
import { batch, stmt } from "./query.ts";
import { accountDeletedEmail } from "./templates.ts";
import type { UserRow } from "./users.ts";

/**
 * Deletes the user's OAuth identities, codes and row in one transaction (`not_found` when the
 * row went meanwhile), then e-mails `accountDeletedEmail` (or the override). Resolves to
 * whether the notice was sent. @internal
 */
export async function deleteAccount(
  db: D1Database,
  user: UserRow,
  o: { send: EmailSender; render: unknown; appName: unknown },
): Promise<{ notified: boolean }> {
  const [, , removed] = await batch(db, [
    stmt(db, "DELETE FROM oauth_identities WHERE user_id = ?", user.id),
    stmt(db, "DELETE FROM otp_codes WHERE email = ?", user.email),
    stmt(db, "DELETE FROM users WHERE id = ?", user.id),
  ]);
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
