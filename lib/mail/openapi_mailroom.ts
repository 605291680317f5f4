/**
 * The OpenAPI paths of the mailroom (operator) API under `/mailroom`, with its bearer token.
 *
 * @module
 */
import type { MailErrorCode } from "./errors.ts";
import { EXAMPLE_ITEM } from "./openapi_customer.ts";
import {
  type JsonBody,
  listParams,
  operation,
  type OperationSpec,
  OPERATOR_ERRORS,
  pathParam,
} from "./openapi_ops.ts";
import type { Json } from "./openapi_schemas.ts";

const T = "2026-11-21 09:41:16";
const KEY = { key_id: "12", account_id: "3", prefix: "gh_test_Q1x9", label: "CRM", created_at: T };
const ACCOUNT = {
  account_id: "3",
  name: "Acme Corp",
  status: "open",
  api_access: true,
  sandbox: true,
  created_at: T,
};
const HOOK = {
  webhook_id: "5",
  url: "https://crm.example/hooks/mail",
  events: ["item.received", "request.completed"],
  active: true,
  created_at: T,
};
const PAYLOAD = JSON.stringify({
  id: "evt_6f1c0c64-7a8e-4c57-9d0e-3a1f4c2b9e10",
  type: "item.received",
  account_id: "3",
  created_at: T,
  data: { mail_id: "1042", address_id: "7" },
});

const done = (message: string): JsonBody => ({
  schema: "ActionResult",
  example: { status: 1, message },
});

type Spec = Omit<OperationSpec, "tag" | "security" | "errors"> & {
  tag?: string;
  errors?: MailErrorCode[];
};

function op(spec: Spec): Json {
  return operation({
    ...spec,
    tag: spec.tag ?? "Mailroom: accounts",
    security: "operator",
    errors: [...OPERATOR_ERRORS, ...(spec.errors ?? [19])],
  });
}

const account = pathParam("account_id", "The account.", "3");
const multipart = (schema: string, example: Json): Json => ({
  required: true,
  content: {
    "multipart/form-data": { schema: { $ref: `#/components/schemas/${schema}` }, example },
  },
});
const ITEMS = "Mailroom: items";
const HOOKS = "Mailroom: webhooks";

/** The mailroom paths, relative to the API base. */
export function mailroomPaths(): Json {
  return {
    "/mailroom/accounts": {
      get: op({
        id: "listAccounts",
        summary: "List accounts",
        parameters: listParams,
        ok: {
          schema: "AccountPage",
          example: { data: [ACCOUNT], current_page: 1, per_page: 20, total: 1 },
        },
      }),
      post: op({
        id: "createAccount",
        summary: "Create an account",
        description: "A sandbox account's keys start gh_test_ and may create test items.",
        body: { schema: "AccountInput", example: { name: "Acme Corp", sandbox: true } },
        status: 201,
        ok: { schema: "AccountCreated", example: { account_id: "3" } },
      }),
    },
    "/mailroom/accounts/{account_id}": {
      get: op({
        id: "getAccount",
        summary: "An account with its users, addresses, keys and webhooks",
        description: "Keys are shown by prefix and webhooks without their secret.",
        parameters: [account],
        ok: {
          schema: "AccountDetail",
          example: {
            ...ACCOUNT,
            users: [{ user_id: "4", full_name: "Ann Archer" }],
            addresses: [{ address_id: "7", user_id: "4", label: "Main office", created_at: T }],
            api_keys: [{ ...KEY, revoked_at: null }],
            webhooks: [HOOK],
          },
        },
      }),
      patch: op({
        id: "updateAccount",
        summary: "Close or reopen an account, or change its API access",
        parameters: [account],
        body: { schema: "AccountUpdate", example: { status: "closed" } },
        ok: done("Account updated."),
      }),
    },
    "/mailroom/accounts/{account_id}/users": {
      post: op({
        id: "createUser",
        summary: "Add a user (rules start inactive)",
        parameters: [account],
        body: { schema: "UserInput", example: { full_name: "Ann Archer" } },
        status: 201,
        ok: { schema: "UserCreated", example: { user_id: "4" } },
      }),
    },
    "/mailroom/accounts/{account_id}/addresses": {
      post: op({
        id: "createAddress",
        summary: "Add an address for a user",
        parameters: [account],
        body: { schema: "AddressInput", example: { user_id: "4", label: "Main office" } },
        status: 201,
        ok: { schema: "AddressCreated", example: { address_id: "7" } },
      }),
    },
    "/mailroom/accounts/{account_id}/api-keys": {
      post: op({
        id: "createApiKey",
        summary: "Create an API key (shown only in this answer)",
        parameters: [account],
        body: { schema: "ApiKeyInput", example: { label: "CRM" }, required: false },
        status: 201,
        ok: {
          schema: "CreatedKey",
          example: { key_id: "12", api_key: "gh_test_Q1x9vT3kLmN0pRsUwYz2aBcDeFgH" },
        },
      }),
    },
    "/mailroom/api-keys": {
      get: op({
        id: "findApiKeys",
        summary: "Find API keys by the prefix a customer quotes",
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
        parameters: [pathParam("key_id", "The key.", "12")],
        ok: done("Key revoked."),
      }),
    },
    "/mailroom/accounts/{account_id}/items": {
      get: op({
        id: "listAccountItems",
        tag: ITEMS,
        summary: "An account's items, with their states and histories",
        description: "What the account's own `GET /items` answers, for the operator.",
        parameters: [account, ...listParams],
        ok: {
          schema: "ItemPage",
          example: { data: [EXAMPLE_ITEM], current_page: 1, per_page: 20, total: 1 },
        },
      }),
    },
    "/mailroom/accounts/{account_id}/rules": {
      get: op({
        id: "listAccountRules",
        summary: "An account's system rules (one row per user)",
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
      }),
    },
    "/mailroom/accounts/{account_id}/webhooks": {
      post: op({
        id: "registerWebhook",
        tag: HOOKS,
        summary: "Register a webhook (its secret is shown only in this answer)",
        parameters: [account],
        body: {
          schema: "WebhookInput",
          example: { url: HOOK.url, events: HOOK.events },
        },
        status: 201,
        ok: {
          schema: "WebhookCreated",
          example: { webhook_id: "5", secret: "whsec_3kq9ZtV1xY8wRm2Pn4Lb6Hc0" },
        },
      }),
    },
    "/mailroom/webhooks/{webhook_id}/deliveries": {
      get: op({
        id: "listDeliveries",
        tag: HOOKS,
        summary: "A webhook's delivery log",
        parameters: [pathParam("webhook_id", "The webhook.", "5")],
        ok: {
          schema: "DeliveryList",
          example: {
            data: [{
              delivery_id: "88",
              event_id: "evt_6f1c0c64-7a8e-4c57-9d0e-3a1f4c2b9e10",
              event_type: "item.received",
              state: "delivered",
              attempts: [
                { attempt: 1, at: T, status_code: 503, error: "HTTP 503" },
                { attempt: 2, at: "2026-11-21 09:41:17", status_code: 204, error: null },
              ],
            }],
          },
        },
      }),
    },
    "/mailroom/deliveries/{delivery_id}/redeliver": {
      post: op({
        id: "redeliver",
        tag: HOOKS,
        summary: "Send a past delivery's event again",
        description: "A new delivery to the same webhook with the same body (same event id), " +
          "signed afresh, with its own attempts and retries. 19 when the webhook is inactive.",
        parameters: [pathParam("delivery_id", "The delivery to send again.", "88")],
        status: 201,
        ok: { schema: "Redelivered", example: { delivery_id: "89" } },
      }),
    },
    "/mailroom/deliveries/{delivery_id}": {
      get: op({
        id: "getDelivery",
        tag: HOOKS,
        summary: "A past delivery, signed afresh (for a replay)",
        description: "The body exactly as delivered, with a signature made now under the " +
          "webhook's secret: `deno task mail:replay` sends it to a local receiver.",
        parameters: [pathParam("delivery_id", "The delivery.", "88")],
        ok: {
          schema: "SignedDelivery",
          example: {
            delivery_id: "88",
            webhook_id: "5",
            event_type: "item.received",
            state: "delivered",
            body: PAYLOAD,
            timestamp: 1795257600,
            signature: "v1=" + "5d".repeat(32),
          },
        },
      }),
    },
    "/mailroom/items": {
      post: op({
        id: "receiveItem",
        tag: ITEMS,
        summary: "Record a received item with its envelope image",
        description: "The user's active rules act on it. Upload limit 20 MiB (after the token).",
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
        parameters: [pathParam("mail_id", "The item.", "1042")],
        ok: { schema: "MailItem", example: EXAMPLE_ITEM },
        errors: [19, 14],
      }),
    },
    "/mailroom/requests": {
      get: op({
        id: "listRequests",
        tag: ITEMS,
        summary: "Pending requests, oldest item first",
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
        description: "Open and rescan need the scan PDF. Upload limit 20 MiB (after the token).",
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
        parameters: [pathParam("mail_id", "The item.", "1043")],
        body: { schema: "FailInput", example: { reason: "Envelope is sealed with wax" } },
        ok: done("Request failed."),
        errors: [19, 14, 471],
      }),
    },
  };
}
