/**
 * The OpenAPI document's component schemas: one per record the API sends or takes, named as
 * its TypeScript interface where there is one (`MailItem`, `AccountDetail`, ...), so the test
 * suite can hold the two to the same fields.
 *
 * @module
 */
import { mailErrors } from "./errors.ts";
import { ITEM_ACTIONS, ITEM_STATUSES } from "./lifecycle.ts";
import { AUTOMATION_NAMES } from "./rules.ts";
import { MAIL_EVENT_TYPES } from "./db.ts";
import { ITEM_TYPES, MAX_MAIL_IDS, PAGE_SIZE } from "./types.ts";

/** A JSON object. */
export type Json = Record<string, unknown>;

/** A reference to a component schema. */
export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });

const time: Json = {
  type: "string",
  pattern: "^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$",
  description: "`YYYY-MM-DD HH:MM:SS`, UTC.",
};
const id = (what: string): Json => ({
  type: "string",
  pattern: "^[1-9][0-9]*$",
  description: `${what} (a decimal string).`,
});
const str = (description: string, extra: Json = {}): Json => ({
  type: "string",
  description,
  ...extra,
});
const obj = (required: string[], properties: Json, description?: string): Json => ({
  type: "object",
  ...(description ? { description } : {}),
  required,
  properties,
});
const all = (properties: Json, description?: string): Json =>
  obj(Object.keys(properties), properties, description);
const page = (item: string, what: string): Json =>
  all({
    data: { type: "array", items: ref(item), maxItems: PAGE_SIZE, description: `${what}.` },
    current_page: { type: "integer", minimum: 1, description: "This page's number." },
    per_page: { type: "integer", const: PAGE_SIZE, description: "Rows per page (20)." },
    total: { type: "integer", minimum: 0, description: "Rows over all pages." },
  }, `A page of ${what.toLowerCase()}: pages hold ${PAGE_SIZE} rows and count from 1.`);
const listOf = (item: string, what: string): Json =>
  all({ data: { type: "array", items: ref(item), description: what } });
const status = { type: "string", enum: ITEM_STATUSES, description: "Item status." };
const action = { type: "string", enum: ITEM_ACTIONS, description: "The request." };

const accountProps: Json = {
  account_id: id("Account id"),
  name: str("Display name."),
  status: { type: "string", enum: ["open", "closed"], description: "Open or closed." },
  api_access: { type: "boolean", description: "Developer API access." },
  sandbox: { type: "boolean", description: "Sandbox account." },
  created_at: time,
};

/** Event payload schemas, by event type: the `data` schema's name. */
export const EVENT_DATA: Readonly<Record<string, string>> = {
  "item.received": "ItemReceivedData",
  "request.completed": "RequestCompletedData",
  "request.failed": "RequestFailedData",
  "rule.changed": "RuleChangedData",
};

/** Every component schema. */
export function componentSchemas(): Json {
  const codes = Object.keys(mailErrors).map(Number);
  return {
    Error: all({
      code: { type: "integer", enum: codes, description: "Error code (see each response)." },
      message: str("What is wrong and what to do next."),
    }, "Every error answer: a stable code and a message in words."),
    ActionResult: all({
      status: { type: "integer", const: 1, description: "Always 1." },
      message: str("Human-readable confirmation."),
    }, "Answer of a successful action or change."),
    ApiIndex: all({
      name: str("Name of the API."),
      version: str("Version (the path segment)."),
      openapi: str("URL of the OpenAPI document.", { format: "uri" }),
      reference: str("URL of the interactive reference.", { format: "uri" }),
    }, "What the API root answers."),
    StatusChange: all({
      status,
      changed_at: time,
      source: {
        type: "string",
        enum: ["mailroom", "customer", "rule", "sandbox"],
        description: "Who caused it.",
      },
      note: {
        type: ["string", "null"],
        description: "The rule name, a cancel, a failure reason, a rescan comment; or null.",
      },
    }, "One entry of an item's status history."),
    MailItem: all({
      mail_id: id("Item id"),
      address_id: id("Address the item was received at"),
      sender_name: str("Sender as read from the envelope."),
      cover_image: {
        type: ["string", "null"],
        format: "uri",
        description: "Signed, expiring link to the envelope image.",
      },
      pdf_content: {
        type: ["string", "null"],
        format: "uri",
        description: "Signed, expiring link to the scan PDF; null until scanned or once deleted.",
      },
      received_at: time,
      current_status: status,
      current_folder_name: {
        type: "string",
        enum: ["Inbox", "Scanned", "Shredded", "Discarded"],
        description: "Folder the item shows in.",
      },
      page_count: { type: "integer", minimum: 0, description: "Pages of the scan." },
      item_type: { type: "string", enum: ITEM_TYPES, description: "Kind of item." },
      status_history: {
        type: "array",
        items: ref("StatusChange"),
        description: "Every status change, oldest first.",
      },
    }, "A mail item."),
    ItemPage: page("MailItem", "Items"),
    SystemRuleRow: all({
      user_id: id("User id"),
      user_full_name: str("The user's full name."),
      auto_scan: { type: "boolean", description: "Auto Scan active." },
      auto_shred: { type: "boolean", description: "Auto Shred active." },
      auto_discard: { type: "boolean", description: "Auto Discard active." },
      last_changed_at: time,
    }, "The rule flags of one user of the account."),
    RulePage: page("SystemRuleRow", "Rule rows"),
    RuleUpdate: all({
      automation_name: { type: "string", enum: AUTOMATION_NAMES, description: "The rule." },
      is_active: { type: "integer", enum: [0, 1], description: "1 enable, 0 disable." },
    }),
    RuleUpdateResult: all({
      status: { type: "integer", const: 1, description: "Always 1." },
      message: str("Human-readable confirmation."),
      users_changed: {
        type: "integer",
        minimum: 0,
        description: "Users whose flag changed (0 for a repeat, which raises no event).",
      },
    }, "Answer of a rule toggle for an account."),
    Redelivered: all({ delivery_id: id("The new delivery's id") }),
    ActionBody: {
      type: "object",
      description: "Give mail_ids (or one mail_id). Options: delete_digital_copy on shred and " +
        "discard, rescan_type and comment on rescan, none on cancels.",
      properties: {
        mail_ids: {
          type: "array",
          minItems: 1,
          maxItems: MAX_MAIL_IDS,
          items: { type: "string" },
          description: `1 to ${MAX_MAIL_IDS} item ids (duplicates count once).`,
        },
        mail_id: str("One item id, instead of mail_ids."),
        delete_digital_copy: {
          type: "boolean",
          description: "Shred, discard: also delete the scan once done.",
        },
        rescan_type: { type: "integer", enum: [1, 2, 3], description: "Rescan: kind of rescan." },
        comment: str("Rescan: what is wrong with the scan.", { maxLength: 1000 }),
      },
      additionalProperties: false,
    },
    TestItemInput: {
      type: "object",
      properties: {
        address_id: str("Address (default the account's first)."),
        sender_name: str("Sender name (default Sandbox Sender).", { minLength: 1, maxLength: 200 }),
        item_type: { type: "string", enum: ITEM_TYPES, description: "Item type (default letter)." },
      },
      additionalProperties: false,
    },
    TestItemResult: all({
      status: { type: "integer", const: 1, description: "Always 1." },
      message: str("Confirmation."),
      mail_id: id("The new item's id"),
    }),
    // mailroom
    AccountInput: obj(["name"], {
      name: str("Display name.", { minLength: 1, maxLength: 200 }),
      api_access: { type: "boolean", description: "Developer API access (default true)." },
      sandbox: { type: "boolean", description: "Sandbox account (default false)." },
    }),
    AccountUpdate: obj([], {
      status: { type: "string", enum: ["open", "closed"], description: "Close or reopen." },
      api_access: { type: "boolean", description: "Developer API access." },
    }),
    AccountCreated: all({ account_id: id("The new account's id") }),
    UserInput: all({ full_name: str("Full name.", { minLength: 1, maxLength: 200 }) }),
    UserCreated: all({ user_id: id("The new user's id") }),
    AddressInput: obj(["user_id"], {
      user_id: id("A user of the account"),
      label: str("Label (default Mailbox).", { maxLength: 200 }),
    }),
    AddressCreated: all({ address_id: id("The new address's id") }),
    ApiKeyInput: obj([], { label: str("What the key is for.") }),
    CreatedKey: all({
      key_id: id("Key id (for revocation)"),
      api_key: str("The key: shown only in this answer.", { pattern: "^gh_(live|test)_" }),
    }),
    WebhookInput: obj(["url"], {
      url: str("Absolute http(s) URL deliveries are POSTed to.", { format: "uri" }),
      events: {
        type: "array",
        items: { type: "string", enum: MAIL_EVENT_TYPES },
        minItems: 1,
        description: "Event types to receive (default all).",
      },
    }),
    WebhookCreated: all({
      webhook_id: id("Webhook id"),
      secret: str("Signing secret: shown only in this answer.", { pattern: "^whsec_" }),
    }),
    AccountRecord: all(accountProps, "An account."),
    AccountPage: page("AccountRecord", "Accounts"),
    UserRecord: all({ user_id: id("User id"), full_name: str("Full name.") }),
    AddressRecord: all({
      address_id: id("Address id"),
      user_id: id("Its user"),
      label: str("Label."),
      created_at: time,
    }),
    ApiKeyRecord: all({
      key_id: id("Key id"),
      account_id: id("Its account"),
      prefix: str("First 12 characters of the key (never the key)."),
      label: str("Label."),
      created_at: time,
      revoked_at: { ...time, type: ["string", "null"], description: "Revocation time, or null." },
    }),
    ApiKeyList: listOf("ApiKeyRecord", "Keys, newest first (at most 100)."),
    WebhookRecord: all({
      webhook_id: id("Webhook id"),
      url: str("Where deliveries go.", { format: "uri" }),
      events: { type: "array", items: { type: "string", enum: MAIL_EVENT_TYPES } },
      active: { type: "boolean", description: "Deliveries are made." },
      created_at: time,
    }, "A webhook (never its secret)."),
    AccountDetail: all({
      ...accountProps,
      users: { type: "array", items: ref("UserRecord") },
      addresses: { type: "array", items: ref("AddressRecord") },
      api_keys: { type: "array", items: ref("ApiKeyRecord") },
      webhooks: { type: "array", items: ref("WebhookRecord") },
    }, "An account with everything created for it."),
    DeliveryLog: all({
      delivery_id: id("Delivery id"),
      event_id: str("Event id (evt_...)."),
      event_type: { type: "string", enum: MAIL_EVENT_TYPES },
      state: { type: "string", enum: ["pending", "delivered", "failed"] },
      attempts: {
        type: "array",
        items: all({
          attempt: { type: "integer", minimum: 1 },
          at: time,
          status_code: { type: ["integer", "null"], description: "Receiver's HTTP status." },
          error: { type: ["string", "null"], description: "Why the attempt failed." },
        }),
      },
    }, "One delivery of an event to a webhook, with its attempts."),
    DeliveryList: listOf("DeliveryLog", "Deliveries, newest first (at most 100)."),
    SignedDelivery: all({
      delivery_id: id("Delivery id"),
      webhook_id: id("Webhook id"),
      event_type: { type: "string", enum: MAIL_EVENT_TYPES },
      state: { type: "string", enum: ["pending", "delivered", "failed"] },
      body: str("The raw body, exactly as delivered."),
      timestamp: { type: "integer", description: "Unix seconds of this signature (now)." },
      signature: str("v1=<hex HMAC-SHA256 of `<timestamp>.<body>`> under the webhook secret.", {
        pattern: "^v1=[0-9a-f]{64}$",
      }),
    }, "A past delivery signed afresh, for a replay."),
    ItemReceipt: obj(["address_id", "sender_name", "envelope"], {
      address_id: id("Address the item arrived at"),
      sender_name: str("Sender as read from the envelope.", { maxLength: 200 }),
      item_type: { type: "string", enum: ITEM_TYPES, description: "Default letter." },
      received_at: str("ISO 8601 receipt time (default now).", { format: "date-time" }),
      envelope: {
        type: "string",
        contentMediaType: "image/png",
        description: "Envelope image: PNG, JPEG or WebP.",
      },
    }),
    ItemCreated: all({ mail_id: id("The new item's id") }),
    PendingRequest: all({
      mail_id: id("Item id"),
      account_id: id("Its account"),
      address_id: id("Its address"),
      action,
      options: {
        type: "object",
        description: "What the customer asked with it.",
        properties: {
          delete_digital_copy: { type: "boolean" },
          rescan_type: { type: "integer", enum: [1, 2, 3] },
          comment: { type: "string" },
        },
      },
    }, "A request waiting for the mailroom."),
    RequestList: listOf("PendingRequest", "Pending requests, oldest item first."),
    Completion: obj([], {
      scan: {
        type: "string",
        contentMediaType: "application/pdf",
        description: "The scan PDF: required to complete open and rescan.",
      },
      page_count: { type: "integer", minimum: 0, maximum: 10000, description: "Pages." },
    }),
    FailInput: all({ reason: str("Why, in words.", { minLength: 1, maxLength: 500 }) }),
    // webhooks
    WebhookPayload: all({
      id: str("Event id (evt_...), the same in every retry and replay."),
      type: { type: "string", enum: MAIL_EVENT_TYPES },
      account_id: id("Account the event concerns"),
      created_at: time,
      data: { type: "object", description: "What happened: see each event." },
    }, "The body of every delivery."),
    ItemReceivedData: all({
      mail_id: id("Item id"),
      address_id: id("Address"),
      sender_name: str("Sender."),
      item_type: { type: "string", enum: ITEM_TYPES },
      received_at: time,
      current_status: status,
    }),
    RequestCompletedData: all({
      mail_id: id("Item id"),
      address_id: id("Address"),
      action,
      current_status: status,
    }),
    RequestFailedData: all({
      mail_id: id("Item id"),
      address_id: id("Address"),
      action,
      reason: str("The mailroom's reason."),
      current_status: status,
    }),
    RuleChangedData: all({
      automation_name: { type: "string", enum: AUTOMATION_NAMES },
      is_active: { type: "integer", enum: [0, 1] },
      users_changed: { type: "integer", minimum: 1 },
    }),
  };
}
