/**
 * Building blocks of the OpenAPI document's operations: one helper that turns an operation's
 * description (id, tag, parameters, body, success answer, error codes) into an Operation
 * Object, with every error code as a documented response (grouped by HTTP status, one example
 * per code, its meaning in the description, and a schema that admits exactly those codes).
 *
 * @module
 */
import { type MailErrorCode, mailErrors } from "./errors.ts";
import { type Json, ref } from "./openapi_schemas.ts";

/** What each error code means: the `when` of the reference. */
export const ERROR_MEANINGS: Readonly<Record<MailErrorCode, string>> = {
  429: "the API key (or the mailroom's operator token) is missing or not correct",
  431: "the API key is revoked",
  430: "the account is closed",
  433: "the account has no API access, or a sandbox endpoint was called with a live key",
  432:
    "wrong method for this path (checked before the key or token); `Allow` lists the methods it takes",
  19: "invalid input: the message names the field and what it takes",
  434: "rate limited, or too many wrong keys or operator tokens: wait Retry-After seconds",
  18: "internal error (logged without secrets); retry later",
  89: "the address does not exist (or the account has none yet)",
  9400: "the address belongs to another account",
  14: "an item does not exist or belongs to another account",
  471: "an item's status does not allow the operation",
  469: "an item belongs to another address of the account",
  9403: "the file link is invalid or has expired",
  9404: "no such endpoint",
  9410: "the account, user, API key, webhook or delivery does not exist (mailroom)",
  9422:
    "the webhook URL targets a loopback, private, link-local, shared, unspecified, metadata or reserved address or name that the operator has not allowed (mailroom)",
};

/** An example message per code, as the server words it. */
const EXAMPLE_MESSAGES: Readonly<Partial<Record<MailErrorCode, string>>> = {
  429: "Key is not correct, please use the right key and try again. Keys start gh_live_ or " +
    "gh_test_ and are shown once, when created (POST /mailroom/accounts/{account_id}/api-keys).",
  19: "mail_ids must be an array of 1 to 500 item ids (or give one mail_id)",
  434: "Too many wrong API keys from this client; retry after 4 seconds.",
  89: "Address not found: there is no address 999. The address_id of your items (GET /items) " +
    "names your addresses.",
  471: "Item status does not allow this operation (item 1042 is opened; open needs an item " +
    "that is received). GET /items shows each item's current_status.",
  432: "Specified method is incorrect, please recheck and try again later. " +
    "/api/account-docs/v2/mailroom/accounts takes GET or POST.",
  9410: "No account 999: list accounts with GET /mailroom/accounts, or create one with " +
    'POST /mailroom/accounts {"name": "..."}.',
  9422: "169.254.169.254 is a cloud metadata address. Webhooks do not go to internal " +
    "addresses; an operator can allow this target with the webhook setting allowTargets " +
    "(MAIL_WEBHOOK_ALLOW in the reference app and `deno task mail`).",
};

/** The response of one error code alone (`413` is code 19 for a body over the limit). */
function errorExample(code: MailErrorCode, status: number): Json {
  const message = status === 413
    ? "Request body too large (limit 65536 bytes)."
    : EXAMPLE_MESSAGES[code] ?? mailErrors[code].message;
  return {
    summary: `${code}: ${status === 413 ? "the body is over the limit" : ERROR_MEANINGS[code]}`,
    value: { code, message },
  };
}

/** Error responses for `codes`, by HTTP status; `bodyLimit` adds 413 (code 19). */
export function errorResponses(codes: MailErrorCode[], bodyLimit: boolean): Json {
  const byStatus = new Map<number, MailErrorCode[]>();
  for (const code of codes) {
    const s = mailErrors[code].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), code]);
  }
  if (bodyLimit) byStatus.set(413, [19]);
  const out: Json = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const lines = list.map((c) =>
      `- \`${c}\`: ${status === 413 ? "the body is over the limit" : ERROR_MEANINGS[c]}`
    );
    // a body code that reads like another HTTP status is said to be none
    const note = list.some((c) => c !== status && c >= 100 && c <= 599)
      ? `\n\nThe \`code\` of the body is this API's own error code, not an HTTP status: ` +
        (list.includes(429)
          ? "`429` is a missing or wrong API key, answered with HTTP 401 (too many requests " +
            "are HTTP 429 with code `434`)."
          : `this answer's HTTP status is ${status}.`)
      : "";
    out[String(status)] = {
      description: `Error.\n\n${lines.join("\n")}${note}`,
      ...(list.includes(434)
        ? { headers: { "Retry-After": { $ref: "#/components/headers/RetryAfter" } } }
        : list.includes(432)
        ? { headers: { Allow: { $ref: "#/components/headers/Allow" } } }
        : {}),
      content: {
        "application/json": {
          schema: {
            allOf: [ref("Error")],
            properties: { code: { enum: list } },
          },
          examples: Object.fromEntries(list.map((c) => [`code_${c}`, errorExample(c, status)])),
        },
      },
    };
  }
  return out;
}

/** A JSON request or response body with its example. */
export interface JsonBody {
  /** Component schema name, or an inline schema. */
  schema: string | Json;
  /** An example value. */
  example: unknown;
  /** What it is. */
  description?: string;
}

/** The description of one operation. */
export interface OperationSpec {
  /** operationId: the typed client's method name. */
  id: string;
  /** Tag (a section of the reference). */
  tag: string;
  /** One line. */
  summary: string;
  /** Longer text (Markdown). */
  description?: string;
  /** Parameters (path and query). */
  parameters?: Json[];
  /** JSON request body. */
  body?: JsonBody & { required?: boolean };
  /** Another request body (multipart). */
  rawBody?: Json;
  /** Success status (default 200). */
  status?: number;
  /** Success body. */
  ok: JsonBody | { raw: Json; description: string };
  /** Error codes it can answer. */
  errors: MailErrorCode[];
  /** Security: `apiKey` (default), `operator` or `none`. */
  security?: "apiKey" | "operator" | "none";
  /** Extensions (`x-...`). */
  extensions?: Json;
}

const schemaOf = (s: string | Json): Json => typeof s === "string" ? ref(s) : s;

/** The Operation Object. */
export function operation(spec: OperationSpec): Json {
  const ok = "raw" in spec.ok ? { description: spec.ok.description, content: spec.ok.raw } : {
    description: spec.ok.description ?? "Success.",
    content: {
      "application/json": { schema: schemaOf(spec.ok.schema), example: spec.ok.example },
    },
  };
  return {
    operationId: spec.id,
    tags: [spec.tag],
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    ...(spec.security === "none"
      ? { security: [] }
      : spec.security === "operator"
      ? { security: [{ operatorToken: [] }] }
      : {}),
    ...(spec.parameters ? { parameters: spec.parameters } : {}),
    ...(spec.body
      ? {
        requestBody: {
          required: spec.body.required ?? true,
          content: {
            "application/json": { schema: schemaOf(spec.body.schema), example: spec.body.example },
          },
        },
      }
      : spec.rawBody
      ? { requestBody: spec.rawBody }
      : {}),
    responses: {
      [String(spec.status ?? 200)]: ok,
      // every route has the 64 KiB body limit (uploads 20 MiB), so every route may answer 413
      ...errorResponses(spec.errors, true),
    },
    ...(spec.extensions ?? {}),
  };
}

/** A path parameter. */
export const pathParam = (name: string, description: string, example: string): Json => ({
  name,
  in: "path",
  required: true,
  description,
  schema: { type: "string" },
  example,
});

/** `sort_order` and `page` of lists. */
export const listParams: Json[] = [
  {
    name: "sort_order",
    in: "query",
    required: false,
    description: "`asc` or `desc` (default desc).",
    schema: { type: "string", enum: ["asc", "desc"], default: "desc" },
    example: "desc",
  },
  {
    name: "page",
    in: "query",
    required: false,
    description: "Page number from 1 (default 1); a page past the end has no rows.",
    schema: { type: "integer", minimum: 1, default: 1 },
    example: 1,
  },
];

/** Codes every customer call with an API key can answer. */
export const KEY_ERRORS: MailErrorCode[] = [429, 431, 430, 433, 432, 434, 18];
/** Codes every mailroom call can answer. */
export const OPERATOR_ERRORS: MailErrorCode[] = [429, 434, 432, 18];

/** The time the examples show. */
export const EXAMPLE_TIME = "2026-11-21 09:41:16";

/** A success answer `{"status": 1, "message": ...}`. */
export const operationDone = (message: string): JsonBody => ({
  schema: "ActionResult",
  example: { status: 1, message },
});

/** A mailroom operation: the operator's token, its error codes, 19 unless told. */
export type MailroomSpec = Omit<OperationSpec, "tag" | "security" | "errors"> & {
  /** Tag (default `Mailroom: accounts`). */
  tag?: string;
  /** Error codes besides the ones every mailroom call can answer (default `[19]`). */
  errors?: MailErrorCode[];
};

/** The Operation Object of a mailroom operation. */
export function mailroomOp(spec: MailroomSpec): Json {
  return operation({
    ...spec,
    tag: spec.tag ?? "Mailroom: accounts",
    security: "operator",
    errors: [...OPERATOR_ERRORS, ...(spec.errors ?? [19])],
  });
}
