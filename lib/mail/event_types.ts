/**
 * Webhook payloads as receivers get them: the JSON body of every delivery, and the `data` of
 * each event type. The OpenAPI document's `webhooks` describe the same shapes.
 *
 * @module
 */
import type { ItemAction, ItemStatus } from "./lifecycle.ts";
import type { MailEventType } from "./db.ts";

/** The body of a webhook delivery. */
export interface WebhookPayload<T = Record<string, unknown>> {
  /** Event id (`evt_...`), the same in every retry and replay of the event. */
  id: string;
  /** Event type. */
  type: MailEventType;
  /** Account the event concerns. */
  account_id: string;
  /** When it happened, `YYYY-MM-DD HH:MM:SS` UTC. */
  created_at: string;
  /** What happened (see the `*Data` types). */
  data: T;
}

/** `data` of `item.received`: the mailroom (or a sandbox key) recorded a new item. */
export interface ItemReceivedData {
  /** Item id. */
  mail_id: string;
  /** Address it arrived at. */
  address_id: string;
  /** Sender as read from the envelope. */
  sender_name: string;
  /** Item type. */
  item_type: string;
  /** Receipt time. */
  received_at: string;
  /** `received`, or the request an active rule filed (e.g. `open_requested`). */
  current_status: ItemStatus;
}

/** `data` of `request.completed`: the mailroom completed a pending request. */
export interface RequestCompletedData {
  /** Item id. */
  mail_id: string;
  /** Its address. */
  address_id: string;
  /** The request completed. */
  action: ItemAction;
  /** The item's status now (a rule may have filed the next request). */
  current_status: ItemStatus;
}

/** `data` of `request.failed`: the mailroom could not do a pending request. */
export interface RequestFailedData {
  /** Item id. */
  mail_id: string;
  /** Its address. */
  address_id: string;
  /** The request that failed. */
  action: ItemAction;
  /** Why, in the mailroom's words. */
  reason: string;
  /** The status the item returned to. */
  current_status: ItemStatus;
}

/** `data` of `rule.changed`: a system rule toggle changed at least one user. */
export interface RuleChangedData {
  /** The rule. */
  automation_name: "auto_scan" | "auto_shred" | "auto_discard";
  /** 1 enabled, 0 disabled. */
  is_active: 0 | 1;
  /** Users whose flag changed. */
  users_changed: number;
}
