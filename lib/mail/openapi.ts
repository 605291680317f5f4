/**
 * The OpenAPI 3.1 document of the whole mail API, served at `<base>/openapi.json` and rendered
 * at `<base>/docs`: the customer API, the sandbox, signed file links, the mailroom API and the
 * webhooks, with component schemas for every record, an example for every request and
 * response, tags, operationIds that are the typed clients' method names, and every error code
 * as a documented response.
 *
 * @module
 */
import { mailErrors } from "./errors.ts";
import { customerPaths } from "./openapi_customer.ts";
import { mailroomPaths } from "./openapi_mailroom.ts";
import { ERROR_MEANINGS } from "./openapi_ops.ts";
import { componentSchemas, type Json } from "./openapi_schemas.ts";
import { webhooks } from "./openapi_webhooks.ts";
import { MAX_MAIL_IDS, PAGE_SIZE } from "./types.ts";

export type { Json } from "./openapi_schemas.ts";

const INTRO = `A virtual mailbox over HTTP: list the mail your addresses received (envelope
image, scan PDF, status history), ask for items to be opened (scanned), rescanned, shredded or
discarded, cancel those requests while pending, and switch the automation rules. The mailroom
API is the operator's side; webhooks tell you when something happened.

**A key in one step.** \`deno task mail\` (or \`deno task start\` for the reference app) prints
a sandbox key (\`gh_test_...\`) for an account with an address that already has three items.
Put it in *Authentication* above and use *Test Request* on \`GET /items\`. Sandbox keys may
also create test items (\`POST /sandbox/items\`) and complete their requests.

**Authentication.** Customer calls send the account's key in \`x-api-key\`. Mailroom calls send
\`Authorization: Bearer <operator token>\`.

**Lists.** ${PAGE_SIZE} rows a page, \`page\` from 1, \`sort_order\` \`asc\` or \`desc\`.

**Limits.** JSON bodies up to 64 KiB (413, code 19), mailroom uploads up to 20 MiB; at most
${MAX_MAIL_IDS} ids per action; 120 requests of burst and 2 a second per key (429, code 434,
\`Retry-After\`); wrong keys and operator tokens are slowed down per client and per key prefix
(10 free, then waits from 1 s doubling to 15 minutes).

**Errors.** Every error is \`{"code": N, "message": "..."}\`; the message says what to do next.`;

function errorTable(): string {
  const rows = Object.entries(mailErrors).map(([code, e]) =>
    `| ${code} | ${e.status} | ${ERROR_MEANINGS[Number(code) as keyof typeof mailErrors]} |`
  );
  return [
    "| code | HTTP | meaning |",
    "| --- | --- | --- |",
    ...rows,
    "| 19 | 413 | the request body is over the limit |",
    "| 19 | 400 | the Host header is malformed |",
  ].join("\n");
}

const TAGS: [string, string][] = [
  ["Items", "The account's mail."],
  ["Item actions", "Requests on items (open, rescan, shred, discard) and their cancels."],
  ["Rules", "System automation rules: Auto Scan, Auto Shred, Auto Discard."],
  ["Sandbox", "Sandbox keys only: make test items and complete their requests."],
  ["Files", "Envelope images and scans behind signed, expiring links."],
  ["Documents", "This API's index, OpenAPI document and interactive reference."],
  ["Mailroom: accounts", "Operator: accounts, users, addresses and API keys."],
  ["Mailroom: items", "Operator: receive items, complete or fail pending requests."],
  ["Mailroom: webhooks", "Operator: register webhooks, read and replay deliveries."],
  ["Webhooks", "What the server POSTs to your webhook URL, signed."],
];

/**
 * The document, with `basePath` as its server URL.
 *
 * @example
 * ```ts
 * import { openApiDocument } from "./openapi.ts";
 * const doc = openApiDocument("/api/account-docs/v2");
 * console.log(doc.openapi); // "3.1.0"
 * ```
 */
export function openApiDocument(basePath: string): Json & { openapi: string } {
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://spec.openapis.org/oas/3.1/dialect/base",
    info: {
      title: "Mail-scanning API",
      version: "2",
      summary: "Scanned mail over HTTP, with a mailroom API and signed webhooks.",
      description: `${INTRO}\n\n${errorTable()}`,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: basePath, description: "This server" }],
    security: [{ apiKey: [] }],
    tags: TAGS.map(([name, description]) => ({ name, description })),
    paths: { ...customerPaths(), ...mailroomPaths() },
    webhooks: webhooks(),
    components: {
      securitySchemes: {
        apiKey: {
          type: "apiKey",
          in: "header",
          name: "x-api-key",
          description: "The account's API key (gh_live_... or, in the sandbox, gh_test_...).",
        },
        operatorToken: {
          type: "http",
          scheme: "bearer",
          description: "The mailroom's operator token (MAIL_OPERATOR_TOKEN).",
        },
      },
      headers: {
        RetryAfter: {
          description: "Seconds to wait before the next request.",
          schema: { type: "integer", minimum: 1 },
          example: 4,
        },
        Allow: {
          description: "The methods this path takes (HEAD wherever GET is).",
          schema: { type: "string" },
          example: "GET, HEAD, POST",
        },
      },
      schemas: componentSchemas(),
    },
  };
}
