/**
 * The OpenAPI paths of the customer API (with its `x-api-key`), the sandbox, signed file links
 * and the API's own documents (index, OpenAPI, interactive reference).
 *
 * @module
 */
import { ITEM_ACTIONS, type ItemAction } from "./lifecycle.ts";
import { type JsonBody, KEY_ERRORS, listParams, operation, pathParam } from "./openapi_ops.ts";
import type { Json } from "./openapi_schemas.ts";
import { MAX_MAIL_IDS } from "./types.ts";

const LINK = "https://mail.example/api/account-docs/v2/files";

/** An item as the examples show it. */
export const EXAMPLE_ITEM: Json = {
  mail_id: "1042",
  address_id: "7",
  sender_name: "ACME Bank",
  cover_image: `${LINK}/covers/9fQx2.png?expires=1795257900&signature=Wm9v`,
  pdf_content: `${LINK}/scans/2bR7k.pdf?expires=1795257900&signature=QmFy`,
  received_at: "2026-11-21 09:41:16",
  current_status: "opened",
  current_folder_name: "Scanned",
  page_count: 2,
  item_type: "letter",
  status_history: [
    { status: "received", changed_at: "2026-11-21 09:41:16", source: "mailroom", note: null },
    {
      status: "open_requested",
      changed_at: "2026-11-21 09:43:02",
      source: "customer",
      note: null,
    },
    { status: "opened", changed_at: "2026-11-21 10:15:40", source: "mailroom", note: null },
  ],
};

const done = (message: string): JsonBody => ({
  schema: "ActionResult",
  example: { status: 1, message },
  description: "Done.",
});

const ACTION_TEXT: Record<ItemAction, { what: string; options: Json; note: string }> = {
  open: {
    what: "open (scan)",
    options: {},
    note: "Items must be `received`; they become `open_requested` until the mailroom scans them.",
  },
  rescan: {
    what: "rescan",
    options: { rescan_type: 2, comment: "Page 2 is blurred" },
    note: "Items must be `opened`; the new scan replaces the old one.",
  },
  shred: {
    what: "shred",
    options: { delete_digital_copy: true },
    note: "Items must be `received` or `opened`. `shredded` is final.",
  },
  discard: {
    what: "discard",
    options: { delete_digital_copy: false },
    note: "Items must be `received` or `opened`. `discarded` is final.",
  },
};

function actionOp(action: ItemAction, cancel: boolean): Json {
  const t = ACTION_TEXT[action];
  const cap = action[0].toUpperCase() + action.slice(1);
  return {
    post: operation({
      id: cancel ? `cancel${cap}` : action,
      tag: "Item actions",
      summary: cancel ? `Cancel ${t.what} requests` : `Request ${t.what} of items`,
      description: (cancel
        ? `Cancels pending ${action} requests: each item returns to the state before the ` +
          "request. A cancel repeated right after it succeeded answers 200 and changes nothing."
        : `${t.note} Repeating a request that is already pending answers 200 and changes ` +
          "nothing.") +
        ` All-or-nothing: every item is checked first (14, 469, 471, in that order) and nothing ` +
        `changes unless all pass. Up to ${MAX_MAIL_IDS} ids.`,
      parameters: [pathParam("address_id", "The items' address.", "7")],
      body: {
        schema: "ActionBody",
        example: { mail_ids: ["1042", "1043"], ...(cancel ? {} : t.options) },
      },
      ok: done(
        cancel
          ? `Items cancel ${action} request submitted successfully.`
          : `Items ${action} request submitted successfully.`,
      ),
      errors: [...KEY_ERRORS, 19, 89, 9400, 14, 471, 469],
    }),
  };
}

/** The customer, sandbox, file and document paths. */
export function customerPaths(): Json {
  const paths: Json = {
    "/": {
      get: operation({
        id: "apiIndex",
        tag: "Documents",
        summary: "The API root: where its documents are",
        description: "The API's name and version, and the URLs of its OpenAPI document and " +
          "interactive reference. Use it to find the documents from the base URL alone; it " +
          "needs no key and changes nothing.",
        security: "none",
        ok: {
          schema: "ApiIndex",
          example: {
            name: "Mail-scanning API",
            version: "v2",
            openapi: "https://mail.example/api/account-docs/v2/openapi.json",
            reference: "https://mail.example/api/account-docs/v2/docs",
          },
        },
        errors: [432, 18],
        extensions: { "x-gatehouse-client": false },
      }),
    },
    "/openapi.json": {
      get: operation({
        id: "openApi",
        tag: "Documents",
        summary: "This OpenAPI 3.1 document",
        description: "Every path this server answers (customer API, sandbox, file links, " +
          "documents, mailroom) and its webhooks, with schemas, examples and error codes. Use " +
          "it to generate a client or to check answers in your tests (the typed clients are " +
          "checked against it). It needs no key and changes nothing.",
        security: "none",
        ok: {
          raw: {
            "application/json": { schema: { type: "object" }, example: { openapi: "3.1.0" } },
          },
          description: "The document.",
        },
        errors: [432, 18],
      }),
    },
    "/docs": {
      get: operation({
        id: "reference",
        tag: "Documents",
        summary: "The interactive reference (this page)",
        description: "An HTML page that renders this document, with every asset served here, " +
          "so it works offline. Open it in a browser to read the API and send requests to this " +
          "server (paste a sandbox key under Authentication). It needs no key and changes nothing.",
        security: "none",
        ok: {
          raw: { "text/html": { schema: { type: "string" }, example: "<!doctype html>..." } },
          description: "The page.",
        },
        errors: [432, 18],
        extensions: { "x-gatehouse-client": false },
      }),
    },
    "/docs/assets/{file}": {
      get: operation({
        id: "referenceAsset",
        tag: "Documents",
        summary: "A script of the interactive reference",
        description: "`reference.js` is the renderer (Scalar's standalone bundle, read from the " +
          "installed npm package `@scalar/api-reference`) and `init.js` starts it with the " +
          "page's settings; the page loads both. When the renderer is not installed, " +
          "`reference.js` answers 503 with a text naming how to install it on this runtime (the " +
          "OpenAPI document is still served). Changes nothing.",
        security: "none",
        parameters: [{
          ...pathParam("file", "`reference.js` (the renderer) or `init.js`.", "init.js"),
          schema: { type: "string", enum: ["reference.js", "init.js"] },
        }],
        ok: {
          raw: {
            "text/javascript": { schema: { type: "string" }, example: "(function(){...})();" },
          },
          description: "The script.",
        },
        errors: [9404, 432, 18],
        extensions: { "x-gatehouse-client": false },
      }),
    },
    "/items": {
      get: operation({
        id: "listItems",
        tag: "Items",
        summary: "List the account's items",
        description: "Items received in the account, 20 per page, by received time (ties by " +
          "mail_id), newest first by default. File links in the answer are signed and expire.",
        parameters: listParams,
        ok: {
          schema: "ItemPage",
          example: { data: [EXAMPLE_ITEM], current_page: 1, per_page: 20, total: 1 },
        },
        errors: [...KEY_ERRORS, 19],
      }),
    },
    "/user-defined-rules/system-user-defined-rules": {
      get: operation({
        id: "listSystemRules",
        tag: "Rules",
        summary: "List the system rules of each user",
        description: "One row per user of the account with its Auto Scan, Auto Shred and Auto " +
          "Discard flags, by user creation, newest first by default.",
        parameters: listParams,
        ok: {
          schema: "RulePage",
          example: {
            data: [{
              user_id: "3",
              user_full_name: "Ann Archer",
              auto_scan: true,
              auto_shred: false,
              auto_discard: false,
              last_changed_at: "2026-11-20 16:02:11",
            }],
            current_page: 1,
            per_page: 20,
            total: 1,
          },
        },
        errors: [...KEY_ERRORS, 19],
      }),
    },
    "/user-defined-rules/update-system-user-defined-rule": {
      put: operation({
        id: "updateSystemRule",
        tag: "Rules",
        summary: "Enable or disable a system rule for all users",
        description: "Applies to every user of the account and to items received from now on. " +
          "On arrival: auto_scan files an open request (then shred or discard once scanned if " +
          "those are on too); otherwise auto_shred wins over auto_discard.",
        body: { schema: "RuleUpdate", example: { automation_name: "auto_scan", is_active: 1 } },
        ok: done("Rule status updated successfully."),
        errors: [...KEY_ERRORS, 19],
      }),
    },
    "/sandbox/items": {
      post: operation({
        id: "createTestItem",
        tag: "Sandbox",
        summary: "Create a test item (sandbox keys)",
        description: "Sandbox keys (gh_test_...) only: records an item as if the mailroom " +
          "received it, with a generated envelope image; the user's rules act on it.",
        body: {
          schema: "TestItemInput",
          example: { sender_name: "City Water Department", item_type: "letter" },
          required: false,
        },
        ok: {
          schema: "TestItemResult",
          example: { status: 1, message: "Test item created.", mail_id: "1044" },
        },
        errors: [...KEY_ERRORS, 19, 89, 9400],
      }),
    },
    "/sandbox/items/{mail_id}/complete": {
      post: operation({
        id: "completeTestRequest",
        tag: "Sandbox",
        summary: "Complete an item's pending request (sandbox keys)",
        description: "Sandbox keys only: does what the mailroom would, with a generated " +
          "one-page scan for open and rescan.",
        parameters: [pathParam("mail_id", "The item.", "1044")],
        ok: done("Pending request completed."),
        errors: [...KEY_ERRORS, 14, 471],
      }),
    },
    "/files/{dir}/{name}": {
      get: operation({
        id: "downloadFile",
        tag: "Files",
        summary: "Download an envelope image or a scan",
        description: "The links in `cover_image` and `pdf_content`: the signature in the query " +
          "is the credential (no key), and the link expires (list the items again for fresh ones).",
        security: "none",
        parameters: [
          {
            ...pathParam("dir", "`covers` or `scans`.", "scans"),
            schema: { type: "string", enum: ["covers", "scans"] },
          },
          pathParam("name", "File name.", "2bR7k.pdf"),
          {
            name: "expires",
            in: "query",
            required: true,
            schema: { type: "integer" },
            example: 1795257900,
          },
          {
            name: "signature",
            in: "query",
            required: true,
            schema: { type: "string" },
            example: "QmFy",
          },
        ],
        ok: {
          raw: {
            "application/pdf": { schema: { type: "string", contentMediaType: "application/pdf" } },
            "image/png": { schema: { type: "string", contentMediaType: "image/png" } },
            "image/jpeg": { schema: { type: "string", contentMediaType: "image/jpeg" } },
            "image/webp": { schema: { type: "string", contentMediaType: "image/webp" } },
            "image/svg+xml": { schema: { type: "string", contentMediaType: "image/svg+xml" } },
          },
          description: "The file.",
        },
        errors: [9403, 432, 18],
      }),
    },
  };
  // the renderer may be missing where the npm package is not installed: 503, plain text
  const asset = (paths["/docs/assets/{file}"] as Json).get as { responses: Json };
  asset.responses["503"] = {
    description: "The renderer (npm `@scalar/api-reference`) is not installed; the text says " +
      "how to install it on this runtime.",
    content: {
      "text/plain": {
        schema: { type: "string" },
        example: "The API reference renderer (npm @scalar/api-reference) is not installed: " +
          "run `npm install @scalar/api-reference`, then restart. The OpenAPI document is " +
          "served at /api/account-docs/v2/openapi.json.",
      },
    },
  };
  for (const action of ITEM_ACTIONS) {
    paths[`/addresses/{address_id}/items/actions/${action}`] = actionOp(action, false);
    paths[`/addresses/{address_id}/items/actions/${action}/cancel`] = actionOp(action, true);
  }
  return paths;
}
