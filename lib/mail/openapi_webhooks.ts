/**
 * The OpenAPI document's `webhooks`: one per event type, with its payload and the signature
 * headers every delivery carries.
 *
 * @module
 */
import { MAIL_EVENT_TYPES, type MailEventType } from "./db.ts";
import { EVENT_DATA, type Json, ref } from "./openapi_schemas.ts";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from "./webhook_signature.ts";

const EXAMPLE_DATA: Record<MailEventType, Json> = {
  "item.received": {
    mail_id: "1042",
    address_id: "7",
    sender_name: "ACME Bank",
    item_type: "letter",
    received_at: "2026-11-21 09:41:16",
    current_status: "received",
  },
  "request.completed": {
    mail_id: "1042",
    address_id: "7",
    action: "open",
    current_status: "opened",
  },
  "request.failed": {
    mail_id: "1042",
    address_id: "7",
    action: "open",
    reason: "Envelope is sealed with wax",
    current_status: "received",
  },
  "rule.changed": { automation_name: "auto_scan", is_active: 1, users_changed: 2 },
};

const SUMMARY: Record<MailEventType, string> = {
  "item.received": "An item was received (rules may have filed a request)",
  "request.completed": "The mailroom completed a pending request",
  "request.failed": "The mailroom could not do a pending request",
  "rule.changed": "A system rule toggle changed at least one user",
};

const header = (name: string, description: string, example: string): Json => ({
  name,
  in: "header",
  required: true,
  description,
  schema: { type: "string" },
  example,
});

/** The operationId of an event's webhook: `item.received` → `onItemReceived`. */
export function webhookOperationId(type: MailEventType): string {
  return "on" + type.split(/[._]/).map((w) => w[0].toUpperCase() + w.slice(1)).join("");
}

/** The `webhooks` object. */
export function webhooks(): Json {
  const out: Json = {};
  for (const type of MAIL_EVENT_TYPES) {
    out[type] = {
      post: {
        operationId: webhookOperationId(type),
        tags: ["Webhooks"],
        summary: SUMMARY[type],
        description: "POSTed to every active webhook of the account subscribed to this event. " +
          `Check \`${SIGNATURE_HEADER}\` before trusting the body: it is \`v1=\` and the hex ` +
          `HMAC-SHA256 of \`<${TIMESTAMP_HEADER}>.<raw body>\` under the webhook's secret ` +
          "(`verifyWebhook` does it), and refuse timestamps more than 5 minutes off. Any 2xx " +
          "answer within 10 s ends the delivery; anything else is retried after 1 s, 2 s, 4 s, " +
          "... (at most 5 minutes apart), 6 attempts in all.",
        security: [],
        parameters: [
          header("x-gatehouse-event", "The event type.", type),
          header("x-gatehouse-delivery", "Delivery id (mailroom delivery log).", "88"),
          header(TIMESTAMP_HEADER, "Unix seconds when this attempt was signed.", "1795257600"),
          header(
            SIGNATURE_HEADER,
            "`v1=<hex HMAC-SHA256 of <timestamp>.<raw body>>` under the webhook secret.",
            "v1=" + "5d".repeat(32),
          ),
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": {
              schema: {
                allOf: [ref("WebhookPayload")],
                properties: { type: { const: type }, data: ref(EVENT_DATA[type]) },
              },
              example: {
                id: "evt_6f1c0c64-7a8e-4c57-9d0e-3a1f4c2b9e10",
                type,
                account_id: "3",
                created_at: "2026-11-21 09:41:16",
                data: EXAMPLE_DATA[type],
              },
            },
          },
        },
        responses: {
          "2XX": { description: "Received: the delivery is done." },
          default: { description: "Not received: the delivery is retried." },
        },
      },
    };
  }
  return out;
}
