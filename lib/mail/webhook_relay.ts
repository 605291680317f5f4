/**
 * Webhooks on a developer's machine: a receiver that checks each delivery's signature and
 * forwards the good ones, unchanged, to a local URL (`deno task mail:listen`), and the replay
 * of a past delivery, fetched from the mailroom API signed afresh, checked, and sent to a
 * local URL (`deno task mail:replay`). The forwarded request keeps the server's headers and
 * body byte for byte, so the local app checks it with `verifyWebhook` and the same secret.
 *
 * @module
 */
import { MailroomClient } from "./mailroom_client.ts";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhook } from "./webhook_signature.ts";

/** Headers that travel with a forwarded delivery. */
const FORWARDED = ["content-type", "user-agent", "x-gatehouse-event", "x-gatehouse-delivery"];

/** What a forwarder does with one delivery. */
export interface ForwardResult {
  /** Delivery id (`x-gatehouse-delivery`). */
  delivery: string;
  /** Event type (`x-gatehouse-event`). */
  event: string;
  /** The signature matched the secret. */
  verified: boolean;
  /** The local URL's HTTP status, or null when not forwarded or unreachable. */
  status: number | null;
  /** Why it was not forwarded or failed, in words. */
  error?: string;
}

/** Settings of the forwarder. */
export interface ForwarderOptions {
  /** The webhook's secret. */
  secret: string;
  /** Where good deliveries go. */
  forwardTo: string;
  /** Largest clock difference accepted, seconds (default 300). */
  toleranceSeconds?: number;
  /** Told about each delivery. */
  onDelivery?: (result: ForwardResult) => void;
}

/**
 * A request handler for the receiver: a delivery whose signature does not match is answered
 * 401 and not forwarded; a good one is forwarded and the local URL's status is passed back to
 * the server (so a failing local app makes the server retry), 502 when it cannot be reached.
 */
export function forwarder(options: ForwarderOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    if (request.method !== "POST") {
      return new Response("This URL receives webhook deliveries (POST).\n", { status: 405 });
    }
    const body = await request.text();
    const delivery = request.headers.get("x-gatehouse-delivery") ?? "?";
    const event = request.headers.get("x-gatehouse-event") ?? "?";
    const verified = await verifyWebhook({
      secret: options.secret,
      headers: request.headers,
      body,
      toleranceSeconds: options.toleranceSeconds,
    });
    if (!verified) {
      options.onDelivery?.({
        delivery,
        event,
        verified,
        status: null,
        error: "signature check failed: refused (401), not forwarded",
      });
      return Response.json({ error: "signature check failed" }, { status: 401 });
    }
    const headers = new Headers();
    for (const name of [...FORWARDED, TIMESTAMP_HEADER, SIGNATURE_HEADER]) {
      const value = request.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const result = await post(options.forwardTo, headers, body);
    options.onDelivery?.({ delivery, event, verified, ...result });
    return new Response(null, { status: result.status === null ? 502 : result.status });
  };
}

async function post(
  url: string,
  headers: Headers,
  body: string,
): Promise<{ status: number | null; error?: string }> {
  try {
    const res = await fetch(url, { method: "POST", headers, body });
    await res.body?.cancel();
    return res.ok ? { status: res.status } : { status: res.status, error: `HTTP ${res.status}` };
  } catch (err) {
    return { status: null, error: `${url} cannot be reached: ${(err as Error).message}` };
  }
}

/** Settings of a replay. */
export interface ReplayOptions {
  /** API base URL, e.g. `http://127.0.0.1:8787/api/account-docs/v2`. */
  api: string;
  /** The mailroom's operator token. */
  operatorToken: string;
  /** The delivery to replay. */
  deliveryId: string;
  /** The webhook's secret: the signature the server made is checked against it. */
  secret: string;
  /** Where to send it. */
  forwardTo: string;
}

/**
 * Replays a past delivery: fetches it from the mailroom API (its body as delivered, signed
 * now under the webhook's secret), checks that signature against `secret` — a mismatch means
 * `secret` is not this webhook's, and nothing is sent — then POSTs it to `forwardTo` with the
 * delivery's headers and `x-gatehouse-replay: 1`.
 */
export async function replayDelivery(options: ReplayOptions): Promise<ForwardResult> {
  const ops = new MailroomClient({ baseUrl: options.api, operatorToken: options.operatorToken });
  const d = await ops.getDelivery(options.deliveryId);
  const headers = new Headers({
    "content-type": "application/json",
    "user-agent": "gatehouse-mail-replay",
    "x-gatehouse-event": d.event_type,
    "x-gatehouse-delivery": d.delivery_id,
    "x-gatehouse-replay": "1",
    [TIMESTAMP_HEADER]: String(d.timestamp),
    [SIGNATURE_HEADER]: d.signature,
  });
  const verified = await verifyWebhook({
    secret: options.secret,
    headers,
    body: d.body,
    now: d.timestamp * 1000,
  });
  if (!verified) {
    return {
      delivery: d.delivery_id,
      event: d.event_type,
      verified,
      status: null,
      error: `the signature does not match the secret given: it is not the secret of webhook ` +
        `${d.webhook_id} (the secret is shown once, when the webhook is registered)`,
    };
  }
  return {
    delivery: d.delivery_id,
    event: d.event_type,
    verified,
    ...await post(options.forwardTo, headers, d.body),
  };
}
