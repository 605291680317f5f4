/**
 * The system rules list (one row per user of the account) and the account-wide toggle.
 *
 * @module
 */
import type { MailDb } from "./db.ts";
import type { AutomationName } from "./rules.ts";
import { formatTime, type Page, PAGE_SIZE, type SortOrder, type SystemRuleRow } from "./types.ts";

/** One page of rule rows, users in creation order (`desc` reverses it). */
export async function listSystemRules(
  db: MailDb,
  accountId: string,
  page: number,
  sortOrder: SortOrder,
): Promise<Page<SystemRuleRow>> {
  const dir = sortOrder === "asc" ? "ASC" : "DESC";
  const [rows, count] = await Promise.all([
    db.execute({
      sql: `SELECT id, full_name, auto_scan, auto_shred, auto_discard, last_changed_at
            FROM mail_users WHERE account_id = ? ORDER BY id ${dir} LIMIT ? OFFSET ?`,
      args: [accountId, PAGE_SIZE, (page - 1) * PAGE_SIZE],
    }),
    db.execute({
      sql: "SELECT count(*) AS n FROM mail_users WHERE account_id = ?",
      args: [accountId],
    }),
  ]);
  return {
    data: rows.rows.map((r) => ({
      user_id: String(r.id),
      user_full_name: String(r.full_name),
      auto_scan: Boolean(Number(r.auto_scan)),
      auto_shred: Boolean(Number(r.auto_shred)),
      auto_discard: Boolean(Number(r.auto_discard)),
      last_changed_at: formatTime(Number(r.last_changed_at)),
    })),
    current_page: page,
    per_page: PAGE_SIZE,
    total: Number(count.rows[0].n),
  };
}

/**
 * Sets a rule for every user of the account. Users already in that state keep their
 * `last_changed_at`; returns how many users changed (0 for a repeat, which raises no event).
 */
export function setSystemRule(
  db: MailDb,
  accountId: string,
  name: AutomationName,
  active: boolean,
): Promise<number> {
  return db.write(async ({ tx, now, emit }) => {
    // name is one of three known column names (checked by the caller's parser)
    const r = await tx.execute({
      sql: `UPDATE mail_users SET ${name} = ?, last_changed_at = ?
            WHERE account_id = ? AND ${name} <> ?`,
      args: [active ? 1 : 0, now, accountId, active ? 1 : 0],
    });
    if (r.rowsAffected > 0) {
      emit("rule.changed", accountId, {
        automation_name: name,
        is_active: active ? 1 : 0,
        users_changed: r.rowsAffected,
      });
    }
    return r.rowsAffected;
  });
}
