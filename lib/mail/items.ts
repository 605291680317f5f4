/**
 * Mail items: the customer's paged list (with status history) and the mailroom's receipt of a
 * new item, where the user's active rules act (see `rules.ts`).
 *
 * @module
 */
import type { MailDb, SqlRow, SqlStatement, WriteScope } from "./db.ts";
import { folderOf, type ItemStatus } from "./lifecycle.ts";
import { arrivalPlan } from "./rules.ts";
import {
  type ChangeSource,
  formatTime,
  type MailItem,
  type Page,
  PAGE_SIZE,
  type SortOrder,
  type StatusChange,
} from "./types.ts";
import { MailServerError } from "./errors.ts";

/** Turns a stored blob key into a signed, expiring URL. */
export type Linker = (key: string) => Promise<string>;

const ITEM_COLUMNS =
  "id, address_id, sender_name, item_type, page_count, status, cover_key, pdf_key, received_at";

/** Builds wire items from rows, loading their histories in one query. */
export async function toMailItems(db: MailDb, rows: SqlRow[], link: Linker): Promise<MailItem[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => Number(r.id));
  const hist = await db.execute({
    sql: `SELECT item_id, status, source, note, changed_at FROM mail_item_history
          WHERE item_id IN (${ids.map(() => "?").join(",")}) ORDER BY item_id, id`,
    args: ids,
  });
  const byItem = new Map<number, StatusChange[]>();
  for (const h of hist.rows) {
    const list = byItem.get(Number(h.item_id)) ?? [];
    list.push({
      status: String(h.status) as ItemStatus,
      changed_at: formatTime(Number(h.changed_at)),
      source: String(h.source) as ChangeSource,
      note: h.note === null ? null : String(h.note),
    });
    byItem.set(Number(h.item_id), list);
  }
  return await Promise.all(rows.map(async (r) => {
    const status = String(r.status) as ItemStatus;
    return {
      mail_id: String(r.id),
      address_id: String(r.address_id),
      sender_name: String(r.sender_name),
      cover_image: r.cover_key === null ? null : await link(String(r.cover_key)),
      pdf_content: r.pdf_key === null ? null : await link(String(r.pdf_key)),
      received_at: formatTime(Number(r.received_at)),
      current_status: status,
      current_folder_name: folderOf(status, r.pdf_key !== null),
      page_count: Number(r.page_count),
      item_type: String(r.item_type),
      status_history: byItem.get(Number(r.id)) ?? [],
    };
  }));
}

/** One page of the account's items, sorted by received time (ties by id). */
export async function listItems(
  db: MailDb,
  accountId: string,
  page: number,
  sortOrder: SortOrder,
  link: Linker,
): Promise<Page<MailItem>> {
  const dir = sortOrder === "asc" ? "ASC" : "DESC";
  const [rows, count] = await Promise.all([
    db.execute({
      sql: `SELECT ${ITEM_COLUMNS} FROM mail_items WHERE account_id = ?
            ORDER BY received_at ${dir}, id ${dir} LIMIT ? OFFSET ?`,
      args: [accountId, PAGE_SIZE, (page - 1) * PAGE_SIZE],
    }),
    db.execute({
      sql: "SELECT count(*) AS n FROM mail_items WHERE account_id = ?",
      args: [accountId],
    }),
  ]);
  return {
    data: await toMailItems(db, rows.rows, link),
    current_page: page,
    per_page: PAGE_SIZE,
    total: Number(count.rows[0].n),
  };
}

/** Loads items by id (any account), in the given order; missing ids are skipped. */
export async function getItems(db: MailDb, ids: string[], link: Linker): Promise<MailItem[]> {
  if (ids.length === 0) return [];
  const r = await db.execute({
    sql: `SELECT ${ITEM_COLUMNS} FROM mail_items WHERE id IN (${ids.map(() => "?").join(",")})`,
    args: ids,
  });
  const items = await toMailItems(db, r.rows, link);
  return ids.flatMap((id) => items.filter((i) => i.mail_id === id));
}

/** A history row insert. */
export function historyInsert(
  itemId: number | string,
  status: ItemStatus,
  source: ChangeSource,
  note: string | null,
  at: number,
): SqlStatement {
  return {
    sql: `INSERT INTO mail_item_history (item_id, status, source, note, changed_at)
          VALUES (?, ?, ?, ?, ?)`,
    args: [itemId, status, source, note, at],
  };
}

/** What the mailroom (or a sandbox key) records about a new item. */
export interface ReceiveInput {
  /** Address it arrived at. */
  address_id: string;
  /** Sender as read from the envelope. */
  sender_name: string;
  /** Item type (see `ITEM_TYPES`). */
  item_type: string;
  /** Blob key of the stored envelope image, or null. */
  cover_key: string | null;
  /** Receipt time, epoch ms (default now). */
  received_at?: number;
}

/** Records a received item and applies its user's active rules; returns the item id. */
export function receiveItem(
  db: MailDb,
  input: ReceiveInput,
  source: ChangeSource = "mailroom",
): Promise<string> {
  return db.write((scope) => receiveIn(scope, input, source));
}

async function receiveIn(
  { tx, now, emit }: WriteScope,
  input: ReceiveInput,
  source: ChangeSource,
): Promise<string> {
  const addr = await tx.execute({
    sql: `SELECT a.account_id, a.user_id, u.auto_scan, u.auto_shred, u.auto_discard
          FROM mail_addresses a JOIN mail_users u ON u.id = a.user_id WHERE a.id = ?`,
    args: [input.address_id],
  });
  const row = addr.rows[0];
  if (!row) {
    throw new MailServerError(
      89,
      `Address not found: there is no address ${input.address_id.slice(0, 40)}. Create one ` +
        "with POST /mailroom/accounts/{account_id}/addresses; GET /mailroom/accounts/{account_id} " +
        "lists an account's addresses.",
    );
  }
  const receivedAt = input.received_at ?? now;
  const plan = arrivalPlan({
    auto_scan: Boolean(Number(row.auto_scan)),
    auto_shred: Boolean(Number(row.auto_shred)),
    auto_discard: Boolean(Number(row.auto_discard)),
  });
  const status: ItemStatus = plan.now ? `${plan.now}_requested` : "received";
  const ins = await tx.execute({
    sql: `INSERT INTO mail_items (account_id, address_id, user_id, sender_name, item_type,
            status, status_before, after_open, cover_key, received_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    args: [
      row.account_id,
      input.address_id,
      row.user_id,
      input.sender_name,
      input.item_type,
      status,
      plan.now ? "received" : null,
      plan.afterOpen,
      input.cover_key,
      receivedAt,
    ],
  });
  const id = String(ins.lastInsertRowid);
  const history = [historyInsert(id, "received", source, null, receivedAt)];
  if (plan.now) history.push(historyInsert(id, status, "rule", `auto_${ruleOf(plan.now)}`, now));
  await tx.batch(history);
  emit("item.received", String(row.account_id), {
    mail_id: id,
    address_id: input.address_id,
    sender_name: input.sender_name,
    item_type: input.item_type,
    received_at: formatTime(receivedAt),
    current_status: status,
  });
  return id;
}

function ruleOf(action: string): string {
  return action === "open" ? "scan" : action;
}
