/**
 * Webhook signatures. Each delivery carries `x-gatehouse-timestamp` (unix seconds) and
 * `x-gatehouse-signature: v1=<hex>`, the hex HMAC-SHA256 of `<timestamp>.<raw body>` under the
 * webhook's secret. Receivers verify with `verifyWebhook` and reject old timestamps.
 *
 * @module
 */
import { hmac, hmacKey, timingSafeEqual, toHex } from "./crypto.ts";

/** Header carrying the unix-seconds timestamp. */
export const TIMESTAMP_HEADER = "x-gatehouse-timestamp";
/** Header carrying `v1=<hex signature>`. */
export const SIGNATURE_HEADER = "x-gatehouse-signature";

/**
 * The `x-gatehouse-signature` value for a body sent at `timestamp`.
 *
 * @example
 * ```ts
 * import { signWebhook } from "./webhook_signature.ts";
 * console.log(await signWebhook("whsec_x", 1700000000, "{}")); // "v1=..."
 * ```
 */
export async function signWebhook(
  secret: string,
  timestamp: number,
  body: string,
): Promise<string> {
  return "v1=" + toHex(await hmac(await hmacKey(secret), `${timestamp}.${body}`));
}

/** What a receiver checks. */
export interface VerifyWebhookInput {
  /** The webhook's secret (from registration). */
  secret: string;
  /** The request's headers. */
  headers: Headers;
  /** The raw request body, exactly as received. */
  body: string;
  /** Largest accepted clock difference in seconds (default 300). */
  toleranceSeconds?: number;
  /** Current time, epoch ms (default now). */
  now?: number;
}

/**
 * True when a delivery's signature matches and its timestamp is recent.
 *
 * @example
 * ```ts
 * import { verifyWebhook } from "./webhook_signature.ts";
 * async function handle(req: Request): Promise<Response> {
 *   const body = await req.text();
 *   const ok = await verifyWebhook({ secret: "whsec_x", headers: req.headers, body });
 *   return new Response(null, { status: ok ? 204 : 401 });
 * }
 * ```
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<boolean> {
  const ts = Number(input.headers.get(TIMESTAMP_HEADER));
  const given = input.headers.get(SIGNATURE_HEADER) ?? "";
  if (!Number.isInteger(ts)) return false;
  const now = (input.now ?? Date.now()) / 1000;
  if (Math.abs(now - ts) > (input.toleranceSeconds ?? 300)) return false;
  return timingSafeEqual(given, await signWebhook(input.secret, ts, input.body));
}
