/**
 * The OpenAPI paths of the mailroom (operator) API under `/mailroom`, with its bearer token:
 * accounts, users, addresses, keys, an account's items and rules, and the work queue (its
 * webhook paths are in `openapi_mailroom_webhooks.ts`).
 *
 * @module
 */
import { EXAMPLE_ITEM } from "./openapi_customer.ts";
import { mailroomWebhookPaths, WEBHOOK_RECORD } from "./openapi_mailroom_webhooks.ts";
import {
  EXAMPLE_TIME as T,
  listParams,
  mailroomOp as op,
  operationDone as done,
  pathParam,
} from "./openapi_ops.ts";
import type { Json } from "./openapi_schemas.ts";

const KEY = { key_id: "12", account_id: "3", prefix: "gh_test_Q1x9", label: "CRM", created_at: T };
const ACCOUNT = {
  account_id: "3",
  name: "Acme Corp",
  status: "open",
  api_access: true,
  sandbox: true,
  created_at: T,
};
const account = pathParam("account_id", "The account.", "3");
const multipart = (schema: string, example: Json): Json => ({
  required: true,
  content: {
    "multipart/form-data": { schema: { $ref: `#/components/schemas/${schema}` }, example },
  },
});
const ITEMS = "Mailroom: items";

/** The mailroom paths, relative to the API base. */
export function mailroomPaths(): Json {
  return {
    "/mailroom/accounts": {
      get: op({
        id: "listAccounts",
        summary: "List accounts",
        description:
          "Every account, 20 per page, newest first by default, with its status, API access and " +
          "sandbox flag. Use it to find an account id (the one `deno task mail` makes is named " +
          "Sandbox). Changes nothing.",
        parameters: listParams,
        ok: {
          schema: "AccountPage",
          example: { data: [ACCOUNT], current_page: 1, per_page: 20, total: 1 },
        },
      }),
      post: op({
        id: "createAccount",
        summary: "Create an account",
        description: "Registers a customer account, open and with API access unless told " +
          "otherwise. A sandbox account's keys start gh_test_ and may create test items. Next: " +
          "add a user, an address for the user, and an API key.",
        body: { schema: "AccountInput", example: { name: "Acme Corp", sandbox: true } },
        status: 201,
        ok: { schema: "AccountCreated", example: { account_id: "3" } },
      }),
    },
    "/mailroom/accounts/{account_id}": {
      get: op({
        id: "getAccount",
        summary: "An account with its users, addresses, keys and webhooks",
        description: "Everything the mailroom made for the account: its users, addresses, API " +
          "keys (by prefix, never the key) and webhooks (never the secret). Use it to find an " +
          "address or key id. Changes nothing.",
        parameters: [account],
        ok: {
          schema: "AccountDetail",
          example: {
            ...ACCOUNT,
            users: [{ user_id: "4", full_name: "Ann Archer" }],
            addresses: [{ address_id: "7", user_id: "4", label: "Main office", created_at: T }],
            api_keys: [{ ...KEY, revoked_at: null }],
            webhooks: [WEBHOOK_RECORD],
          },
        },
        errors: [9410],
      }),
      patch: op({
        id: "updateAccount",
        summary: "Close or reopen an account, or change its API access",
        description:
          "Closes (`status: closed`) or reopens an account, or turns its developer API access off " +
          "or on. Its keys then answer 430 (closed) or 433 (no API access) until it is changed " +
          "back; items, users, keys and webhooks stay as they are.",
        parameters: [account],
        body: { schema: "AccountUpdate", example: { status: "closed" } },
        ok: done("Account updated."),
        errors: [19, 9410],
      }),
    },
    "/mailroom/accounts/{account_id}/users": {
      post: op({
        id: "createUser",
        summary: "Add a user (rules start inactive)",
        description:
          "Adds a user to the account. Each user has its own system rules (all off at first) and " +
          "owns addresses: create a user before its address. Raises no event.",
        parameters: [account],
        body: { schema: "UserInput", example: { full_name: "Ann Archer" } },
        status: 201,
        ok: { schema: "UserCreated", example: { user_id: "4" } },
        errors: [19, 9410],
      }),
    },
    "/mailroom/accounts/{account_id}/addresses": {
      post: op({
        id: "createAddress",
        summary: "Add an address for a user",
        description:
          "Adds a mail address for one of the account's users. Its `address_id` is what the " +
          "customer's item actions take and what `POST /mailroom/items` receives mail at. 9410 " +
          "when `user_id` is not a user of the account.",
        parameters: [account],
        body: { schema: "AddressInput", example: { user_id: "4", label: "Main office" } },
        status: 201,
        ok: { schema: "AddressCreated", example: { address_id: "7" } },
        errors: [19, 9410],
      }),
    },
    "/mailroom/accounts/{account_id}/api-keys": {
      post: op({
        id: "createApiKey",
        summary: "Create an API key (shown only in this answer)",
        description:
          "Creates a key for the account: `gh_test_...` for a sandbox account, `gh_live_...` " +
          "otherwise. The key is in this answer only (it is stored as a hash): hand it to the " +
          "customer, who sends it as `x-api-key`. It works until revoked.",
        parameters: [account],
        body: { schema: "ApiKeyInput", example: { label: "CRM" }, required: false },
        status: 201,
        ok: {
          schema: "CreatedKey",
          example: { key_id: "12", api_key: "gh_test_Q1x9vT3kLmN0pRsUwYz2aBcDeFgH" },
        },
        errors: [19, 9410],
      }),
    },
    "/mailroom/api-keys": {
      get: op({
        id: "findApiKeys",
        summary: "Find API keys by the prefix a customer quotes",
        description:
          "The keys whose first characters are the prefix a customer quotes (4 to 12 characters), " +
          "at most 100, newest first, with their account and label, never the key. Use it to " +
          "find the key to revoke. Changes nothing.",
        parameters: [{
          name: "prefix",
          in: "query",
          required: true,
          description: "The first 4 to 12 characters of a key.",
          schema: { type: "string", pattern: "^[A-Za-z0-9_-]{4,12}$" },
          example: "gh_test_Q1x9",
        }],
        ok: { schema: "ApiKeyList", example: { data: [{ ...KEY, revoked_at: null }] } },
      }),
    },
    "/mailroom/api-keys/{key_id}/revoke": {
      post: op({
        id: "revokeApiKey",
        summary: "Revoke an API key (idempotent)",
        description:
          "Revokes a key at once: its requests answer 431 from then on. The key stays listed with " +
          "`revoked_at`; revoking it again answers 200 and changes nothing.",
        parameters: [pathParam("key_id", "The key.", "12")],
        ok: done("Key revoked."),
        errors: [9410],
      }),
    },
    "/mailroom/accounts/{account_id}/items": {
      get: op({
        id: "listAccountItems",
        tag: ITEMS,
        summary: "An account's items, with their states and histories",
        description: "What the account's own `GET /items` answers, for the operator: its " +
          "items with their status, history and fresh file links, 20 per page. Changes nothing.",
        parameters: [account, ...listParams],
        ok: {
          schema: "ItemPage",
          example: { data: [EXAMPLE_ITEM], current_page: 1, per_page: 20, total: 1 },
        },
        errors: [19, 9410],
      }),
    },
    "/mailroom/accounts/{account_id}/rules": {
      get: op({
        id: "listAccountRules",
        summary: "An account's system rules (one row per user)",
        description:
          "The account's system rules as its own `GET /user-defined-rules/system-user-defined-" +
          "rules` answers them: one row per user with its Auto Scan, Auto Shred and Auto " +
          "Discard flags. Changes nothing.",
        parameters: [account, ...listParams],
        ok: {
          schema: "RulePage",
          example: {
            data: [{
              user_id: "4",
              user_full_name: "Ann Archer",
              auto_scan: true,
              auto_shred: false,
              auto_discard: false,
              last_changed_at: T,
            }],
            current_page: 1,
            per_page: 20,
            total: 1,
          },
        },
        errors: [19, 9410],
      }),
      put: op({
        id: "setAccountRule",
        summary: "Turn a system rule on or off for every user of the account",
        description: "As the account's own `PUT /user-defined-rules/update-system-user-defined-" +
          "rule`; a change raises `rule.changed`.",
        parameters: [account],
        body: { schema: "RuleUpdate", example: { automation_name: "auto_scan", is_active: 1 } },
        ok: {
          schema: "RuleUpdateResult",
          example: { status: 1, message: "Rule status updated successfully.", users_changed: 2 },
        },
        errors: [19, 9410],
      }),
    },
    ...mailroomWebhookPaths(),
    "/mailroom/items": {
      post: op({
        id: "receiveItem",
        tag: ITEMS,
        summary: "Record a received item with its envelope image",
        description: "Records a piece of mail that arrived at an address, with its envelope " +
          "image: the customer sees it in `GET /items` as `received`, the user's active rules " +
          "may file a request at once, and `item.received` is sent. Upload limit 20 MiB " +
          "(checked after the token).",
        rawBody: multipart("ItemReceipt", {
          address_id: "7",
          sender_name: "ACME Bank",
          item_type: "letter",
          envelope: "(PNG bytes)",
        }),
        status: 201,
        ok: { schema: "ItemCreated", example: { mail_id: "1042" } },
        errors: [19, 89],
      }),
    },
    "/mailroom/items/{mail_id}": {
      get: op({
        id: "getItem",
        tag: ITEMS,
        summary: "Any item by id",
        description:
          "Any account's item with its status, history and fresh file links. Use it to look at an " +
          "item before completing or failing its request. Changes nothing.",
        parameters: [pathParam("mail_id", "The item.", "1042")],
        ok: { schema: "MailItem", example: EXAMPLE_ITEM },
        errors: [14],
      }),
    },
    "/mailroom/requests": {
      get: op({
        id: "listRequests",
        tag: ITEMS,
        summary: "Pending requests, oldest item first",
        description:
          "The mailroom's work queue: pending open, rescan, shred and discard requests of every " +
          "account, oldest item first. Do each with `POST /mailroom/items/{mail_id}/complete` " +
          "or refuse it with `.../fail`. Changes nothing.",
        parameters: [{
          name: "limit",
          in: "query",
          required: false,
          description: "At most this many (1 to 1000, default 100).",
          schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
          example: 100,
        }],
        ok: {
          schema: "RequestList",
          example: {
            data: [{
              mail_id: "1043",
              account_id: "3",
              address_id: "7",
              action: "rescan",
              options: { rescan_type: 2, comment: "Page 2 is blurred" },
            }],
          },
        },
      }),
    },
    "/mailroom/items/{mail_id}/complete": {
      post: op({
        id: "completeRequest",
        tag: ITEMS,
        summary: "Complete an item's pending request",
        description: "Does what the customer asked: open and rescan need the scan PDF (the " +
          "item becomes `opened`, a rescan replaces the scan), shred and discard make the item " +
          "`shredded` or `discarded` (final). Sends `request.completed`. Upload limit 20 MiB " +
          "(checked after the token).",
        parameters: [pathParam("mail_id", "The item.", "1043")],
        rawBody: multipart("Completion", { scan: "(PDF bytes)", page_count: 2 }),
        ok: done("Request completed."),
        errors: [19, 14, 471],
      }),
    },
    "/mailroom/items/{mail_id}/fail": {
      post: op({
        id: "failRequest",
        tag: ITEMS,
        summary: "Fail an item's pending request (it returns to the state before)",
        description:
          "Refuses an item's pending request with a reason the customer sees in the item's " +
          "history: the item returns to the state before the request and `request.failed` is " +
          "sent. 471 when nothing is pending.",
        parameters: [pathParam("mail_id", "The item.", "1043")],
        body: { schema: "FailInput", example: { reason: "Envelope is sealed with wax" } },
        ok: done("Request failed."),
        errors: [19, 14, 471],
      }),
    },
  };
}
