/**
 * Webhook delivery: every committed event goes to the account's active webhooks that subscribe
 * to its type, signed (see `webhook_signature.ts`), retried with exponential backoff on a
 * non-2xx answer or a network error, each attempt written to the delivery log. A webhook's
 * target is checked when it is registered and at each attempt (`webhook_targets.ts`): an
 * internal target is refused (9422 at registering; at delivery the attempt fails and is not
 * retried), and a redirect is never followed (a 3xx answer is a failed attempt).
 *
 * @module
 */
import type { MailDb, MailEvent, MailEventType } from "./db.ts";
import { MAIL_EVENT_TYPES } from "./db.ts";
import { randomToken } from "./crypto.ts";
import { MailServerError } from "./errors.ts";
import { unknownAccount, unknownDelivery, unknownWebhook } from "./not_found.ts";
import { formatTime } from "./types.ts";
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from "./webhook_signature.ts";
import { type WebhookTargetOptions, WebhookTargets } from "./webhook_targets.ts";
import { attemptOnce, type AttemptOutcome } from "./webhook_post.ts";

/** Delivery settings (with the target checks' `allowTargets` and `resolve`). */
export interface WebhookOptions extends WebhookTargetOptions {
  /**
   * A fetch to deliver with, instead of a connection to the checked addresses. The targets are
   * still checked (the name resolved) before each call and it is called with
   * `redirect: "manual"`, but where it connects is its own affair: the check cannot hold
   * against DNS rebinding there. Default: none (a `node:http(s)` request to the checked
   * addresses, see `webhook_post.ts`).
   */
  fetch?: typeof fetch;
  /** Attempts per delivery before giving up (default 6). */
  maxAttempts?: number;
  /** Delay before the first retry; doubles each time (default 1000 ms). */
  baseDelayMs?: number;
  /** Longest delay between attempts (default 300000 ms). */
  maxDelayMs?: number;
  /** Time allowed for the receiver to answer, the name's resolution included (default 10000 ms). */
  timeoutMs?: number;
}

/** One entry of a webhook's delivery log. */
export interface DeliveryLog {
  /** Delivery id. */
  delivery_id: string;
  /** Event id. */
  event_id: string;
  /** Event type. */
  event_type: MailEventType;
  /** `pending`, `delivered` or `failed`. */
  state: string;
  /** Attempts, oldest first. */
  attempts: { attempt: number; at: string; status_code: number | null; error: string | null }[];
}

/** A past delivery, signed afresh, as the replay command fetches it. */
export interface SignedDelivery {
  /** Delivery id. */
  delivery_id: string;
  /** Webhook id. */
  webhook_id: string;
  /** Event type. */
  event_type: MailEventType;
  /** `pending`, `delivered` or `failed`. */
  state: string;
  /** The raw body, exactly as delivered. */
  body: string;
  /** Unix seconds of this signature (now). */
  timestamp: number;
  /** `v1=<hex>` over `<timestamp>.<body>` under the webhook's secret. */
  signature: string;
}

/** Delivers events to webhooks. */
export class WebhookDispatcher {
  #db: MailDb;
  #fetch: typeof fetch | null;
  #targets: WebhookTargets;
  #max: number;
  #base: number;
  #cap: number;
  #timeout: number;
  /** Waiting attempts, by delivery id. */
  #timers = new Map<string, ReturnType<typeof setTimeout>>();
  #busy = 0;
  #waiters: (() => void)[] = [];
  #closed = false;
  #aborts = new Set<AbortController>();

  /** Listens to the database's committed events; throws naming a bad `allowTargets` entry. */
  constructor(db: MailDb, options: WebhookOptions = {}) {
    this.#db = db;
    this.#fetch = options.fetch ?? null;
    this.#targets = new WebhookTargets(options);
    this.#max = options.maxAttempts ?? 6;
    this.#base = options.baseDelayMs ?? 1000;
    this.#cap = options.maxDelayMs ?? 300_000;
    this.#timeout = options.timeoutMs ?? 10_000;
    db.onEvent((event) => this.#track(this.#enqueue(event)));
  }

  /**
   * Registers a webhook for an account; the secret is returned once. 19 for a URL that is not
   * http(s), 9422 for one that targets an internal address or name (unless allowed).
   */
  async register(
    accountId: string,
    url: string,
    events: MailEventType[] = [...MAIL_EVENT_TYPES],
  ): Promise<{ webhook_id: string; secret: string }> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new MailServerError(19, "url must be an absolute http(s) URL");
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new MailServerError(19, "url must be an absolute http(s) URL");
    }
    if (events.length === 0 || events.some((e) => !MAIL_EVENT_TYPES.includes(e))) {
      throw new MailServerError(19, `events must be some of ${MAIL_EVENT_TYPES.join(", ")}`);
    }
    await this.#targets.checkSaved(parsed);
    const acct = await this.#db.execute({
      sql: "SELECT 1 FROM mail_accounts WHERE id = ?",
      args: [accountId],
    });
    if (!acct.rows.length) throw unknownAccount(accountId);
    const secret = "whsec_" + randomToken(24);
    const r = await this.#db.write(({ tx, now }) =>
      tx.execute({
        sql: `INSERT INTO mail_webhooks (account_id, url, secret, events, created_at)
              VALUES (?, ?, ?, ?, ?)`,
        args: [accountId, parsed.href, secret, events.join(","), now],
      })
    );
    return { webhook_id: String(r.lastInsertRowid), secret };
  }

  /**
   * Deactivates a webhook (idempotent): no event is delivered to it any more, and its pending
   * deliveries end as `failed` without another attempt. It stays in the account's list
   * (`active: false`) with its delivery log. 9410 when there is no such webhook.
   */
  async deactivate(webhookId: string): Promise<void> {
    const ended = await this.#db.write(async ({ tx }) => {
      const r = await tx.execute({
        sql: "UPDATE mail_webhooks SET active = 0 WHERE id = ?",
        args: [webhookId],
      });
      if (r.rowsAffected === 0) throw unknownWebhook(webhookId);
      const pending = await tx.execute({
        sql: "SELECT id FROM mail_webhook_deliveries WHERE webhook_id = ? AND state = 'pending'",
        args: [webhookId],
      });
      await tx.execute({
        sql: `UPDATE mail_webhook_deliveries SET state = 'failed', next_attempt_at = NULL
              WHERE webhook_id = ? AND state = 'pending'`,
        args: [webhookId],
      });
      return pending.rows.map((row) => String(row.id));
    });
    // their waiting retries are dropped (an attempt in flight keeps the state failed)
    for (const id of ended) {
      const timer = this.#timers.get(id);
      if (timer === undefined) continue;
      clearTimeout(timer);
      this.#timers.delete(id);
      this.#busy--;
    }
    if (this.#busy === 0) { for (const w of this.#waiters.splice(0)) w(); }
  }

  /** The delivery log of a webhook, newest delivery first (at most 100); 9410 if unknown. */
  async deliveries(webhookId: string): Promise<DeliveryLog[]> {
    const hook = await this.#db.execute({
      sql: "SELECT 1 FROM mail_webhooks WHERE id = ?",
      args: [webhookId],
    });
    if (!hook.rows.length) throw unknownWebhook(webhookId);
    const d = await this.#db.execute({
      sql: `SELECT id, event_id, event_type, state FROM mail_webhook_deliveries
            WHERE webhook_id = ? ORDER BY id DESC LIMIT 100`,
      args: [webhookId],
    });
    const out: DeliveryLog[] = [];
    for (const row of d.rows) {
      const a = await this.#db.execute({
        sql: `SELECT attempt, at, status_code, error FROM mail_webhook_attempts
              WHERE delivery_id = ? ORDER BY attempt`,
        args: [row.id],
      });
      out.push({
        delivery_id: String(row.id),
        event_id: String(row.event_id),
        event_type: String(row.event_type) as MailEventType,
        state: String(row.state),
        attempts: a.rows.map((x) => ({
          attempt: Number(x.attempt),
          at: formatTime(Number(x.at)),
          status_code: x.status_code === null ? null : Number(x.status_code),
          error: x.error === null ? null : String(x.error),
        })),
      });
    }
    return out;
  }

  /**
   * A past delivery with a fresh signature under its webhook's secret (which is never shown),
   * so a receiver can check it as it checks a live delivery. 9410 naming the next step if unknown.
   */
  async signedDelivery(deliveryId: string): Promise<SignedDelivery> {
    const r = await this.#db.execute({
      sql: `SELECT d.id, d.webhook_id, d.event_type, d.state, d.payload, w.secret
            FROM mail_webhook_deliveries d JOIN mail_webhooks w ON w.id = d.webhook_id
            WHERE d.id = ?`,
      args: [deliveryId],
    });
    const d = r.rows[0];
    if (!d) throw unknownDelivery(deliveryId);
    const timestamp = Math.floor(this.#db.now() / 1000);
    const body = String(d.payload);
    return {
      delivery_id: String(d.id),
      webhook_id: String(d.webhook_id),
      event_type: String(d.event_type) as MailEventType,
      state: String(d.state),
      body,
      timestamp,
      signature: await signWebhook(String(d.secret), timestamp, body),
    };
  }

  /**
   * Sends a past delivery's event again, as a new delivery to the same webhook with the same
   * body (the receiver sees the same event id and a fresh signature), with its own attempts
   * and retries. Resolves to the new delivery's id; 9410 naming the next step when the delivery
   * is unknown, 19 when its webhook is no longer active.
   */
  async redeliver(deliveryId: string): Promise<string> {
    const r = await this.#db.execute({
      sql: `SELECT d.webhook_id, d.event_id, d.event_type, d.payload, w.active
            FROM mail_webhook_deliveries d JOIN mail_webhooks w ON w.id = d.webhook_id
            WHERE d.id = ?`,
      args: [deliveryId],
    });
    const d = r.rows[0];
    if (!d) throw unknownDelivery(deliveryId);
    if (Number(d.active) !== 1) {
      throw new MailServerError(
        19,
        `The webhook of delivery ${deliveryId} is no longer active: register it again to receive ` +
          "events.",
      );
    }
    const id = await this.#db.write(async ({ tx, now }) => {
      const inserted = await tx.execute({
        sql: `INSERT INTO mail_webhook_deliveries
              (webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
              VALUES (?, ?, ?, ?, ?, ?)`,
        args: [d.webhook_id, d.event_id, d.event_type, d.payload, now, now],
      });
      return String(inserted.lastInsertRowid);
    });
    this.#schedule(id, 0);
    return id;
  }

  /** Schedules deliveries left pending by a previous run. */
  async resume(): Promise<void> {
    const r = await this.#db.execute(
      "SELECT id, next_attempt_at FROM mail_webhook_deliveries WHERE state = 'pending'",
    );
    for (const row of r.rows) {
      this.#schedule(String(row.id), Math.max(0, Number(row.next_attempt_at) - this.#db.now()));
    }
  }

  /** Resolves once no delivery is queued, waiting or in flight. */
  idle(): Promise<void> {
    if (this.#busy === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Stops: cancels waiting retries and aborts attempts in flight (they stay pending). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#busy -= this.#timers.size;
    this.#timers.clear();
    if (this.#busy === 0) { for (const w of this.#waiters.splice(0)) w(); }
    for (const a of this.#aborts) a.abort();
    await this.idle();
  }

  #track(p: Promise<unknown>): void {
    this.#busy++;
    p.catch((err) => console.error("mail webhooks:", (err as Error).message)).finally(() => {
      this.#busy--;
      if (this.#busy === 0) { for (const w of this.#waiters.splice(0)) w(); }
    });
  }

  #schedule(deliveryId: string, delayMs: number): void {
    if (this.#closed) return;
    this.#busy++;
    const t = setTimeout(() => {
      this.#timers.delete(deliveryId);
      this.#busy--;
      this.#track(this.#attempt(deliveryId));
    }, delayMs);
    this.#timers.set(deliveryId, t);
  }

  async #enqueue(event: MailEvent): Promise<void> {
    const hooks = await this.#db.execute({
      sql: "SELECT id, events FROM mail_webhooks WHERE account_id = ? AND active = 1",
      args: [event.account_id],
    });
    const targets = hooks.rows.filter((h) => String(h.events).split(",").includes(event.type));
    if (!targets.length || this.#closed) return;
    const payload = JSON.stringify({ ...event, created_at: formatTime(event.created_at) });
    const ids = await this.#db.write(async ({ tx, now }) => {
      const out: string[] = [];
      for (const h of targets) {
        const r = await tx.execute({
          sql: `INSERT INTO mail_webhook_deliveries
                (webhook_id, event_id, event_type, payload, next_attempt_at, created_at)
                VALUES (?, ?, ?, ?, ?, ?)`,
          args: [h.id, event.id, event.type, payload, now, now],
        });
        out.push(String(r.lastInsertRowid));
      }
      return out;
    });
    for (const id of ids) this.#schedule(id, 0);
  }

  async #attempt(deliveryId: string): Promise<void> {
    const r = await this.#db.execute({
      sql: `SELECT d.id, d.event_type, d.payload, d.attempts, d.state, w.url, w.secret
            FROM mail_webhook_deliveries d JOIN mail_webhooks w ON w.id = d.webhook_id
            WHERE d.id = ?`,
      args: [deliveryId],
    });
    const d = r.rows[0];
    if (!d || d.state !== "pending" || this.#closed) return;
    const attempt = Number(d.attempts) + 1;
    const started = this.#db.now();
    const ts = Math.floor(Date.now() / 1000);
    const body = String(d.payload);
    const abort = new AbortController();
    this.#aborts.add(abort);
    const timer = setTimeout(() => abort.abort(), this.#timeout);
    let outcome: AttemptOutcome;
    try {
      outcome = await attemptOnce({
        url: String(d.url),
        body,
        headers: {
          "content-type": "application/json",
          "user-agent": "gatehouse-mail-webhooks",
          "x-gatehouse-event": String(d.event_type),
          "x-gatehouse-delivery": deliveryId,
          [TIMESTAMP_HEADER]: String(ts),
          [SIGNATURE_HEADER]: await signWebhook(String(d.secret), ts, body),
        },
        signal: abort.signal,
        targets: this.#targets,
        fetch: this.#fetch,
      });
    } finally {
      clearTimeout(timer);
      this.#aborts.delete(abort);
    }
    const { status, error, refused } = outcome;
    const ok = error === null;
    // a refused target fails at once: another attempt would be refused the same way
    const final = !ok && (refused || attempt >= this.#max || this.#closed);
    const delay = Math.min(this.#cap, this.#base * 2 ** (attempt - 1));
    const state = ok ? "delivered" : final && !this.#closed ? "failed" : "pending";
    // (a delivery whose webhook was deactivated meanwhile stays failed)
    const [, updated] = await this.#db.write(({ tx, now }) =>
      tx.batch([
        {
          sql: `INSERT INTO mail_webhook_attempts
                (delivery_id, attempt, at, status_code, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?)`,
          args: [deliveryId, attempt, started, status, error, now - started],
        },
        {
          sql: `UPDATE mail_webhook_deliveries SET attempts = ?, state = ?, next_attempt_at = ?
                WHERE id = ? AND state = 'pending'`,
          args: [attempt, state, state === "pending" ? now + delay : null, deliveryId],
        },
      ])
    );
    if (state === "pending" && updated.rowsAffected > 0) this.#schedule(deliveryId, delay);
  }
}
