/**
 * The OpenAPI paths of the mailroom's webhooks: register and deactivate a webhook, read its
 * delivery log, redeliver or fetch (for a replay) a past delivery.
 *
 * @module
 */
import {
  EXAMPLE_TIME as T,
  mailroomOp as op,
  operationDone as done,
  pathParam,
} from "./openapi_ops.ts";
import type { Json } from "./openapi_schemas.ts";

const HOOKS = "Mailroom: webhooks";
const account = pathParam("account_id", "The account.", "3");

/** A webhook as the examples show it. */
export const WEBHOOK_RECORD: Json = {
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

/** The webhook paths of the mailroom, relative to the API base. */
export function mailroomWebhookPaths(): Json {
  return {
    "/mailroom/accounts/{account_id}/webhooks": {
      post: op({
        id: "registerWebhook",
        tag: HOOKS,
        summary: "Register a webhook (its secret is shown only in this answer)",
        description:
          "Registers a URL that receives the account's events (all four, or those in `events`) " +
          "from now on, each POST signed with the secret of this answer: keep it to check " +
          "signatures (`verifyWebhook`). `deno task mail:listen` registers one for a local app " +
          "and deactivates it when it stops. A URL whose host is, or resolves to, a loopback, " +
          "private, link-local, shared, unspecified, metadata or reserved address (in any " +
          "spelling), or `localhost`, a metadata name or a name that only resolves inside a " +
          "network, is refused with 9422 unless the operator allowed it (`allowTargets`); each " +
          "delivery checks again after resolving the name, and redirects are not followed.",
        parameters: [account],
        body: {
          schema: "WebhookInput",
          example: { url: WEBHOOK_RECORD.url, events: WEBHOOK_RECORD.events },
        },
        status: 201,
        ok: {
          schema: "WebhookCreated",
          example: { webhook_id: "5", secret: "whsec_3kq9ZtV1xY8wRm2Pn4Lb6Hc0" },
        },
        errors: [19, 9410, 9422],
      }),
    },
    "/mailroom/webhooks/{webhook_id}/deactivate": {
      post: op({
        id: "deactivateWebhook",
        tag: HOOKS,
        summary: "Deactivate a webhook (idempotent)",
        description: "Stops deliveries to the webhook: no event goes to it from now on, and " +
          "its pending deliveries end as `failed` without another attempt. It stays in the " +
          "account's list with `active: false`, with its delivery log. `deno task mail:listen` " +
          "deactivates the webhook it registered when it stops.",
        parameters: [pathParam("webhook_id", "The webhook.", "5")],
        ok: done("Webhook deactivated."),
        errors: [9410],
      }),
    },
    "/mailroom/webhooks/{webhook_id}/deliveries": {
      get: op({
        id: "listDeliveries",
        tag: HOOKS,
        summary: "A webhook's delivery log",
        description:
          "The webhook's deliveries, newest first (at most 100), each with its state (`pending`, " +
          "`delivered`, `failed`) and every attempt's time, HTTP status and error. Use it to " +
          "see why a receiver missed events and to find a delivery to redeliver or replay. " +
          "Changes nothing.",
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
        errors: [9410],
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
        errors: [19, 9410],
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
        errors: [9410],
      }),
    },
  };
}
