/**
 * The OpenAPI 3.1 document of the customer API, served at `<base>/openapi.json`.
 *
 * @module
 */
import { ITEM_ACTIONS, ITEM_STATUSES } from "./lifecycle.ts";
import { AUTOMATION_NAMES } from "./rules.ts";
import { ITEM_TYPES, MAX_MAIL_IDS, PAGE_SIZE } from "./types.ts";
import { mailErrors } from "./errors.ts";

/** A JSON object. */
export type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json, description: string): Json => ({
  description,
  content: { "application/json": { schema } },
});
const errors = (...statuses: number[]): Json =>
  Object.fromEntries(
    [401, 403, 405, 429, 500, ...statuses].sort().map((
      s,
    ) => [String(s), json(ref("Error"), "Error")]),
  );
const listParams = [
  {
    name: "sort_order",
    in: "query",
    required: false,
    schema: { type: "string", enum: ["asc", "desc"], default: "desc" },
  },
  {
    name: "page",
    in: "query",
    required: false,
    schema: { type: "integer", minimum: 1, default: 1 },
  },
];
const page = (item: string): Json => ({
  type: "object",
  required: ["data", "current_page", "per_page", "total"],
  properties: {
    data: { type: "array", items: ref(item) },
    current_page: { type: "integer", minimum: 1 },
    per_page: { type: "integer", const: PAGE_SIZE },
    total: { type: "integer", minimum: 0 },
  },
});

function actionPath(action: string, cancel: boolean): Json {
  return {
    post: {
      operationId: cancel ? `cancel_${action}` : action,
      summary: cancel ? `Cancel a pending ${action} request` : `Request ${action} of items`,
      parameters: [{ name: "address_id", in: "path", required: true, schema: { type: "string" } }],
      requestBody: {
        required: true,
        content: { "application/json": { schema: ref("ActionBody") } },
      },
      responses: { "200": json(ref("ActionResult"), "Accepted"), ...errors(404, 413, 422) },
    },
  };
}

/**
 * The document, with `basePath` as its server URL.
 *
 * @example
 * ```ts
 * import { openApiDocument } from "./openapi.ts";
 * console.log(openApiDocument("/api/account-docs/v2").openapi); // "3.1.0"
 * ```
 */
export function openApiDocument(basePath: string): Json & { openapi: string } {
  const paths: Json = {
    "/items": {
      get: {
        operationId: "listItems",
        summary: "Items received in the account, 20 per page, by received time",
        parameters: listParams,
        responses: { "200": json(ref("ItemPage"), "A page of items"), ...errors(422) },
      },
    },
    "/user-defined-rules/system-user-defined-rules": {
      get: {
        operationId: "listSystemRules",
        summary: "System rules: one row per user of the account",
        parameters: listParams,
        responses: { "200": json(ref("RulePage"), "A page of rule rows"), ...errors(422) },
      },
    },
    "/user-defined-rules/update-system-user-defined-rule": {
      put: {
        operationId: "updateSystemRule",
        summary: "Enable or disable a system rule for all users",
        requestBody: {
          required: true,
          content: { "application/json": { schema: ref("RuleUpdate") } },
        },
        responses: { "200": json(ref("ActionResult"), "Updated"), ...errors(413, 422) },
      },
    },
    "/sandbox/items": {
      post: {
        operationId: "createTestItem",
        summary: "Sandbox accounts only: create a test item (rules act on it)",
        requestBody: { content: { "application/json": { schema: ref("TestItemInput") } } },
        responses: { "200": json(ref("TestItemResult"), "Created"), ...errors(404, 422) },
      },
    },
    "/sandbox/items/{mail_id}/complete": {
      post: {
        operationId: "completeTestRequest",
        summary: "Sandbox accounts only: complete an item's pending request",
        parameters: [{ name: "mail_id", in: "path", required: true, schema: { type: "string" } }],
        responses: { "200": json(ref("ActionResult"), "Completed"), ...errors(404) },
      },
    },
  };
  for (const action of ITEM_ACTIONS) {
    paths[`/addresses/{address_id}/items/actions/${action}`] = actionPath(action, false);
    paths[`/addresses/{address_id}/items/actions/${action}/cancel`] = actionPath(action, true);
  }
  const time = { type: "string", pattern: "^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$" };
  return {
    openapi: "3.1.0",
    info: {
      title: "Mail-scanning API",
      version: "2",
      description: "Peer-compatible mail-scanning API. Error codes: " +
        Object.entries(mailErrors).map(([code, e]) => `${code} (HTTP ${e.status})`).join(", "),
    },
    servers: [{ url: basePath }],
    security: [{ apiKey: [] }],
    paths,
    components: {
      securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "x-api-key" } },
      schemas: {
        Error: {
          type: "object",
          required: ["code", "message"],
          properties: { code: { type: "integer" }, message: { type: "string" } },
        },
        ActionResult: {
          type: "object",
          required: ["status", "message"],
          properties: { status: { type: "integer", const: 1 }, message: { type: "string" } },
        },
        StatusChange: {
          type: "object",
          required: ["status", "changed_at", "source", "note"],
          properties: {
            status: { type: "string", enum: ITEM_STATUSES },
            changed_at: time,
            source: { type: "string", enum: ["mailroom", "customer", "rule", "sandbox"] },
            note: { type: ["string", "null"] },
          },
        },
        MailItem: {
          type: "object",
          required: [
            "mail_id",
            "address_id",
            "sender_name",
            "cover_image",
            "pdf_content",
            "received_at",
            "current_status",
            "current_folder_name",
            "page_count",
            "item_type",
            "status_history",
          ],
          properties: {
            mail_id: { type: "string" },
            address_id: { type: "string" },
            sender_name: { type: "string" },
            cover_image: { type: ["string", "null"], format: "uri" },
            pdf_content: { type: ["string", "null"], format: "uri" },
            received_at: time,
            current_status: { type: "string", enum: ITEM_STATUSES },
            current_folder_name: {
              type: "string",
              enum: ["Inbox", "Scanned", "Shredded", "Discarded"],
            },
            page_count: { type: "integer", minimum: 0 },
            item_type: { type: "string", enum: ITEM_TYPES },
            status_history: { type: "array", items: ref("StatusChange") },
          },
        },
        ItemPage: page("MailItem"),
        SystemRuleRow: {
          type: "object",
          required: [
            "user_id",
            "user_full_name",
            "auto_scan",
            "auto_shred",
            "auto_discard",
            "last_changed_at",
          ],
          properties: {
            user_id: { type: "string" },
            user_full_name: { type: "string" },
            auto_scan: { type: "boolean" },
            auto_shred: { type: "boolean" },
            auto_discard: { type: "boolean" },
            last_changed_at: time,
          },
        },
        RulePage: page("SystemRuleRow"),
        RuleUpdate: {
          type: "object",
          required: ["automation_name", "is_active"],
          properties: {
            automation_name: { type: "string", enum: AUTOMATION_NAMES },
            is_active: { type: "integer", enum: [0, 1] },
          },
        },
        ActionBody: {
          type: "object",
          description: "Give mail_ids or mail_id. Options: delete_digital_copy (shred, " +
            "discard), rescan_type and comment (rescan); none on cancels.",
          properties: {
            mail_ids: {
              type: "array",
              minItems: 1,
              maxItems: MAX_MAIL_IDS,
              items: { type: "string" },
            },
            mail_id: { type: "string" },
            delete_digital_copy: { type: "boolean" },
            rescan_type: { type: "integer", enum: [1, 2, 3] },
            comment: { type: "string", maxLength: 1000 },
          },
        },
        TestItemInput: {
          type: "object",
          properties: {
            address_id: { type: "string" },
            sender_name: { type: "string" },
            item_type: { type: "string", enum: ITEM_TYPES },
          },
        },
        TestItemResult: {
          type: "object",
          required: ["status", "message", "mail_id"],
          properties: {
            status: { type: "integer", const: 1 },
            message: { type: "string" },
            mail_id: { type: "string" },
          },
        },
      },
    },
  };
}
