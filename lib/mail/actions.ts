/**
 * Customer actions on items (open, rescan, shred, discard and their cancels), all-or-nothing
 * per request: every named item is checked first (14 unknown, 469 other address, 471 state
 * refuses) and nothing changes unless all pass. Repeating a request that already holds is a
 * no-op, not a duplicate.
 *
 * @module
 */
import type { MailDb, SqlStatement, SqlValue } from "./db.ts";
import { MailServerError } from "./errors.ts";
import {
  allowedStates,
  cancelTransition,
  type ItemAction,
  type ItemState,
  type ItemStatus,
  requestTransition,
} from "./lifecycle.ts";
import { resolveAddress } from "./accounts.ts";

/** Options an action body may carry. */
export interface ActionOptions {
  /** Shred, discard: also delete the scan once done. */
  delete_digital_copy?: boolean;
  /** Rescan: the kind of rescan wanted (1–3). */
  rescan_type?: number;
  /** Rescan: what is wrong with the scan. */
  comment?: string;
}

/** One parsed action request. */
export interface ActionRequest {
  /** The action. */
  action: ItemAction;
  /** True for `.../cancel`. */
  cancel: boolean;
  /** Address from the path. */
  addressId: string;
  /** Distinct item ids, in request order. */
  mailIds: string[];
  /** Body options. */
  options: ActionOptions;
}

/** Success messages, per endpoint. */
export function actionMessage(action: ItemAction, cancel: boolean): string {
  return cancel
    ? `Items cancel ${action} request submitted successfully.`
    : `Items ${action} request submitted successfully.`;
}

/** Applies an action for the account; returns how many items changed (0 for a repeat). */
export async function performAction(
  db: MailDb,
  accountId: string,
  req: ActionRequest,
): Promise<number> {
  await resolveAddress(db, accountId, req.addressId);
  return db.write(async ({ tx, now }) => {
    const ids = req.mailIds.filter((id) => /^[1-9][0-9]{0,17}$/.test(id));
    const r = ids.length === 0 ? { rows: [] } : await tx.execute({
      sql: `SELECT id, account_id, address_id, status, status_before, last_cancelled
            FROM mail_items WHERE id IN (${ids.map(() => "?").join(",")})`,
      args: ids,
    });
    const found = new Map(r.rows.map((row) => [String(row.id), row]));
    for (const id of req.mailIds) {
      const row = found.get(id);
      if (!row || String(row.account_id) !== accountId) {
        throw new MailServerError(
          14,
          `Item not found: ${id.slice(0, 40)} is not an item of this account. ` +
            "GET /items lists your items' mail_id values.",
        );
      }
    }
    const elsewhere = req.mailIds.find((id) => String(found.get(id)!.address_id) !== req.addressId);
    if (elsewhere !== undefined) {
      const at = String(found.get(elsewhere)!.address_id);
      throw new MailServerError(
        469,
        `Items don't belong to the specified address: item ${elsewhere} is at address ${at}; ` +
          `send it to /addresses/${at}/items/actions/... (one request per address).`,
      );
    }
    // group changes by (to, before, cancelled) so 100 items cost a few statements
    const groups = new Map<string, string[]>();
    for (const id of req.mailIds) {
      const row = found.get(id)!;
      const state: ItemState = {
        status: String(row.status) as ItemStatus,
        statusBefore: row.status_before === null ? null : String(row.status_before) as ItemStatus,
        lastCancelled: row.last_cancelled === null
          ? null
          : String(row.last_cancelled) as ItemAction,
      };
      const t = req.cancel
        ? cancelTransition(state, req.action)
        : requestTransition(state, req.action);
      if (t.kind === "refused") {
        const what = req.cancel ? `cancel ${req.action}` : req.action;
        throw new MailServerError(
          471,
          `Item status does not allow this operation (item ${id} is ${state.status}; ` +
            `${what} needs an item that is ${
              allowedStates(req.action, req.cancel).join(" or ")
            }).` +
            " GET /items shows each item's current_status.",
        );
      }
      if (t.kind === "noop") continue;
      const key = JSON.stringify([t.to, req.cancel ? null : state.status]);
      groups.set(key, [...groups.get(key) ?? [], id]);
    }
    const options = req.cancel || Object.keys(req.options).length === 0
      ? null
      : JSON.stringify(req.options);
    const note = req.cancel
      ? `${req.action} cancelled`
      : req.action === "rescan" && req.options.comment
      ? req.options.comment
      : null;
    const stmts: SqlStatement[] = [];
    let changed = 0;
    for (const [key, ids] of groups) {
      const [to, before] = JSON.parse(key) as [ItemStatus, ItemStatus | null];
      const marks = ids.map(() => "?").join(",");
      stmts.push({
        sql: `UPDATE mail_items SET status = ?, status_before = ?, last_cancelled = ?,
              request_options = ?${
          req.cancel && req.action === "open" ? ", after_open = NULL" : ""
        } WHERE id IN (${marks})`,
        args: [to, before, req.cancel ? req.action : null, options, ...ids] as SqlValue[],
      });
      stmts.push({
        sql: `INSERT INTO mail_item_history (item_id, status, source, note, changed_at) VALUES ${
          ids.map(() => "(?, ?, 'customer', ?, ?)").join(",")
        }`,
        args: ids.flatMap((id) => [id, to, note, now]) as SqlValue[],
      });
      changed += ids.length;
    }
    if (stmts.length) await tx.batch(stmts);
    return changed;
  });
}
