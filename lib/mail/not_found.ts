/**
 * The mailroom's answers for records that do not exist, each naming where to find real ones:
 * HTTP 404 like the customer API's unknown address (89) and item (14) — code 9410 for an
 * account, user, API key, webhook or delivery, 14 for an item. A malformed id in a path is
 * answered the same way (no record has it), as the customer API answers a malformed address.
 *
 * @module
 */
import { MailServerError } from "./errors.ts";

/** The kinds of record a mailroom path names by id. */
export type RecordKind = "account" | "key" | "webhook" | "delivery" | "item";

const short = (id: string) => id.slice(0, 20);

/** No such account. */
export function unknownAccount(accountId: string): MailServerError {
  return new MailServerError(
    9410,
    `No account ${short(accountId)}: list accounts with GET /mailroom/accounts, ` +
      `or create one with POST /mailroom/accounts {"name": "..."}.`,
  );
}

/** No such user in the account. */
export function unknownUser(accountId: string, userId: string): MailServerError {
  return new MailServerError(
    9410,
    `user_id ${short(userId)} is not a user of account ${accountId}: list its users with ` +
      `GET /mailroom/accounts/${accountId}, or add one with POST /mailroom/accounts/${accountId}/users ` +
      '{"full_name": "..."}.',
  );
}

/** No such API key. */
export function unknownKey(keyId: string): MailServerError {
  return new MailServerError(
    9410,
    `No API key ${
      short(keyId)
    }: find keys by prefix with GET /mailroom/api-keys?prefix=gh_live_AbCd ` +
      "or list an account's keys with GET /mailroom/accounts/{account_id}.",
  );
}

/** No such webhook. */
export function unknownWebhook(webhookId: string): MailServerError {
  return new MailServerError(
    9410,
    `No webhook ${short(webhookId)}: an account's webhooks are listed by ` +
      "GET /mailroom/accounts/{account_id}.",
  );
}

/** No such webhook delivery. */
export function unknownDelivery(deliveryId: string): MailServerError {
  return new MailServerError(
    9410,
    `No delivery ${short(deliveryId)}: a webhook's deliveries are listed by ` +
      "GET /mailroom/webhooks/{webhook_id}/deliveries.",
  );
}

/** No such item (code 14, as the customer API). */
export function unknownItem(mailId: string): MailServerError {
  return new MailServerError(
    14,
    `Item not found: no item ${mailId.slice(0, 40)}. GET /mailroom/requests lists the items ` +
      "with a pending request.",
  );
}

/** The not-found answer of a record kind. */
export function unknownRecord(kind: RecordKind, id: string): MailServerError {
  switch (kind) {
    case "account":
      return unknownAccount(id);
    case "key":
      return unknownKey(id);
    case "webhook":
      return unknownWebhook(id);
    case "delivery":
      return unknownDelivery(id);
    case "item":
      return unknownItem(id);
  }
}
