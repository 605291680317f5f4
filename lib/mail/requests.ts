/**
 * The mailroom's side of pending requests: list them, complete them (with the scan PDF for
 * open and rescan) or fail them (the item returns to the state before the request).
 *
 * @module
 */
import type { MailDb } from "./db.ts";
import { MailServerError } from "./errors.ts";
import { completedStatus, type ItemStatus, pendingAction } from "./lifecycle.ts";
import { historyInsert } from "./items.ts";
import { unknownItem } from "./not_found.ts";
import { PENDING_SQL } from "./schema.ts";

/** A pending request as the mailroom sees it. */
export interface PendingRequest {
  /** Item id. */
  mail_id: string;
  /** Account of the item. */
  account_id: string;
  /** Address of the item. */
  address_id: string;
  /** What is asked. */
  action: string;
  /** Options the customer gave (rescan type, comment, delete_digital_copy). */
  options: Record<string, unknown>;
}

/** Pending requests, oldest item first (at most `limit`). */
export async function pendingRequests(db: MailDb, limit = 100): Promise<PendingRequest[]> {
  const r = await db.execute({
    sql: `SELECT id, account_id, address_id, status, request_options FROM mail_items
          WHERE ${PENDING_SQL} ORDER BY id LIMIT ?`,
    args: [limit],
  });
  return r.rows.map((row) => ({
    mail_id: String(row.id),
    account_id: String(row.account_id),
    address_id: String(row.address_id),
    action: pendingAction(String(row.status) as ItemStatus) ?? "",
    options: row.request_options === null ? {} : JSON.parse(String(row.request_options)),
  }));
}

/** What completing a request may carry. */
export interface CompleteInput {
  /** Blob key of the uploaded scan (required for open and rescan). */
  pdf_key?: string;
  /** Pages of the scan. */
  page_count?: number;
}

/**
 * Completes the pending request of an item. Returns blob keys that are no longer referenced
 * (a replaced or deleted scan) for the caller to delete. 14 unknown item, 471 nothing pending,
 * 19 a scan is required but missing.
 */
export function completeRequest(
  db: MailDb,
  mailId: string,
  input: CompleteInput,
): Promise<string[]> {
  return db.write(async ({ tx, now, emit }) => {
    const row = await loadItem(tx, mailId);
    const status = String(row.status) as ItemStatus;
    const action = pendingAction(status);
    const done = completedStatus(status);
    if (!action || !done) throw nothingPending(mailId, status);
    const options = row.request_options === null ? {} : JSON.parse(String(row.request_options));
    const oldPdf = row.pdf_key === null ? null : String(row.pdf_key);
    let pdfKey = oldPdf;
    let pages = Number(row.page_count);
    if (action === "open" || action === "rescan") {
      if (!input.pdf_key) throw new MailServerError(19, "a scan PDF is required");
      pdfKey = input.pdf_key;
      pages = input.page_count ?? pages;
    } else if (options.delete_digital_copy) {
      pdfKey = null;
    }
    const follow = action === "open" && row.after_open !== null ? String(row.after_open) : null;
    const finalStatus: ItemStatus = follow ? `${follow}_requested` as ItemStatus : done;
    await tx.batch([
      {
        sql: `UPDATE mail_items SET status = ?, status_before = ?, last_cancelled = NULL,
              request_options = NULL, after_open = NULL, pdf_key = ?, page_count = ? WHERE id = ?`,
        args: [finalStatus, follow ? done : null, pdfKey, pages, mailId],
      },
      historyInsert(mailId, done, "mailroom", null, now),
      ...(follow ? [historyInsert(mailId, finalStatus, "rule", `auto_${follow}`, now)] : []),
    ]);
    emit("request.completed", String(row.account_id), {
      mail_id: mailId,
      address_id: String(row.address_id),
      action,
      current_status: finalStatus,
    });
    return oldPdf && oldPdf !== pdfKey ? [oldPdf] : [];
  });
}

/** Fails the pending request of an item: it returns to the state before the request. */
export function failRequest(db: MailDb, mailId: string, reason: string): Promise<void> {
  return db.write(async ({ tx, now, emit }) => {
    const row = await loadItem(tx, mailId);
    const action = pendingAction(String(row.status) as ItemStatus);
    if (!action || row.status_before === null) {
      throw nothingPending(mailId, String(row.status));
    }
    const back = String(row.status_before) as ItemStatus;
    await tx.batch([
      {
        sql: `UPDATE mail_items SET status = ?, status_before = NULL, request_options = NULL,
              last_cancelled = NULL${action === "open" ? ", after_open = NULL" : ""} WHERE id = ?`,
        args: [back, mailId],
      },
      historyInsert(mailId, back, "mailroom", `${action} failed: ${reason}`, now),
    ]);
    emit("request.failed", String(row.account_id), {
      mail_id: mailId,
      address_id: String(row.address_id),
      action,
      reason,
      current_status: back,
    });
  });
}

function nothingPending(mailId: string, status: string): MailServerError {
  return new MailServerError(
    471,
    `Item status does not allow this operation (item ${mailId} is ${status}, with no pending ` +
      "request). GET /mailroom/requests lists the items with a pending request.",
  );
}

async function loadItem(
  tx: { execute: MailDb["execute"] },
  mailId: string,
): Promise<Record<string, unknown>> {
  const missing = unknownItem(mailId);
  if (!/^[1-9][0-9]{0,17}$/.test(mailId)) throw missing;
  const r = await tx.execute({ sql: "SELECT * FROM mail_items WHERE id = ?", args: [mailId] });
  if (!r.rows[0]) throw missing;
  return r.rows[0] as unknown as Record<string, unknown>;
}
