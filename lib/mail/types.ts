/**
 * Wire shapes of the customer API: what `GET /items`, the rules list and the actions answer.
 *
 * @module
 */
import type { ItemStatus } from "./lifecycle.ts";

/** Who caused a status change. */
export type ChangeSource = "mailroom" | "customer" | "rule" | "sandbox";

/** One entry of an item's status history (oldest first). */
export interface StatusChange {
  /** The status entered. */
  status: ItemStatus;
  /** When, `YYYY-MM-DD HH:MM:SS` UTC. */
  changed_at: string;
  /** Who caused it. */
  source: ChangeSource;
  /** Free text: the rule name, a cancel, a failure reason, a rescan comment; or null. */
  note: string | null;
}

/** A mail item as `GET /items` returns it. */
export interface MailItem {
  /** Item id, a decimal string. */
  mail_id: string;
  /** Address the item was received at. */
  address_id: string;
  /** Sender as read from the envelope. */
  sender_name: string;
  /** Signed, expiring URL of the envelope image. */
  cover_image: string | null;
  /** Signed, expiring URL of the scan PDF, or null until scanned (or after its deletion). */
  pdf_content: string | null;
  /** When the mailroom received it, `YYYY-MM-DD HH:MM:SS` UTC. */
  received_at: string;
  /** Current state. */
  current_status: ItemStatus;
  /** `Inbox`, `Scanned`, `Shredded` or `Discarded`. */
  current_folder_name: string;
  /** Pages of the scan (0 until scanned). */
  page_count: number;
  /** `letter`, `package`, `magazine`, `postcard`, `check` or `other`. */
  item_type: string;
  /** Full history, oldest first. */
  status_history: StatusChange[];
}

/** A page of a list. Pages hold 20 rows and count from 1. */
export interface Page<T> {
  /** Rows of this page. */
  data: T[];
  /** This page's number. */
  current_page: number;
  /** Rows per page (20). */
  per_page: number;
  /** Rows over all pages. */
  total: number;
}

/** One row of the system rules list: the flags of one user of the account. */
export interface SystemRuleRow {
  /** The user's id. */
  user_id: string;
  /** The user's full name. */
  user_full_name: string;
  /** Auto Scan active. */
  auto_scan: boolean;
  /** Auto Shred active. */
  auto_shred: boolean;
  /** Auto Discard active. */
  auto_discard: boolean;
  /** Last change of any flag, `YYYY-MM-DD HH:MM:SS` UTC. */
  last_changed_at: string;
}

/** Answer of a successful action. */
export interface ActionResult {
  /** Always 1. */
  status: 1;
  /** Human-readable confirmation. */
  message: string;
}

/** Sort direction of lists (by received time for items). */
export type SortOrder = "asc" | "desc";

/** Item types the mailroom records. */
export const ITEM_TYPES: readonly string[] = [
  "letter",
  "package",
  "magazine",
  "postcard",
  "check",
  "other",
];

/** Rows per page of every list. */
export const PAGE_SIZE = 20;

/** Most `mail_ids` one action accepts. */
export const MAX_MAIL_IDS = 500;

/**
 * Formats epoch milliseconds as the API's timestamps, `YYYY-MM-DD HH:MM:SS` UTC.
 *
 * @example
 * ```ts
 * import { formatTime } from "./types.ts";
 * console.log(formatTime(0)); // "1970-01-01 00:00:00"
 * ```
 */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}
