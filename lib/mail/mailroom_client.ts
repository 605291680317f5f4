/**
 * The typed client of the mailroom (operator) API under `<base>/mailroom`.
 *
 * @module
 */
import { type ListQuery, MailApiError } from "./client.ts";
import type { MailEventType } from "./db.ts";
import type { PendingRequest } from "./requests.ts";
import type { AccountDetail, AccountRecord, ApiKeyRecord } from "./mailroom_lists.ts";
import type { ActionResult, MailItem, Page, SystemRuleRow } from "./types.ts";
import type { AutomationName } from "./rules.ts";
import type { DeliveryLog, SignedDelivery } from "./webhooks.ts";

/** Mailroom client settings. */
export interface MailroomClientOptions {
  /** API base URL, e.g. `http://127.0.0.1:8787/api/account-docs/v2`. */
  baseUrl: string;
  /** The operator token. */
  operatorToken: string;
  /** fetch to use (default global fetch). */
  fetch?: typeof fetch;
}

/** What receiving an item sends. */
export interface ReceiveItemInput {
  /** Address the item arrived at. */
  address_id: string;
  /** Sender as read from the envelope. */
  sender_name: string;
  /** Item type (default letter). */
  item_type?: string;
  /** Receipt time (default now). */
  received_at?: Date;
  /** Envelope image (PNG, JPEG or WebP). */
  envelope: Blob;
}

function listParams(query: ListQuery): string {
  const params = new URLSearchParams();
  if (query.sort_order) params.set("sort_order", query.sort_order);
  if (query.page !== undefined) params.set("page", String(query.page));
  return params.size ? `?${params}` : "";
}

/**
 * Client of the mailroom API.
 *
 * @example
 * ```ts
 * import { MailroomClient } from "./mailroom_client.ts";
 * const ops = new MailroomClient({
 *   baseUrl: "http://127.0.0.1:8787/api/account-docs/v2",
 *   operatorToken: "op-secret",
 * });
 * const { account_id } = await ops.createAccount({ name: "Acme" });
 * ```
 */
export class MailroomClient {
  #base: string;
  #token: string;
  #fetch: typeof fetch;

  /** Creates the client. */
  constructor(options: MailroomClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, "") + "/mailroom";
    this.#token = options.operatorToken;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const isForm = body instanceof FormData;
    const res = await this.#fetch(this.#base + path, {
      method,
      headers: {
        authorization: `Bearer ${this.#token}`,
        ...(body === undefined || isForm ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
    });
    const parsed = await res.json().catch(() => null);
    if (!res.ok) {
      throw new MailApiError(res.status, Number(parsed?.code ?? 0), String(parsed?.message ?? ""));
    }
    return parsed as T;
  }

  /** One page of accounts, newest first (`sort_order: "asc"` for oldest first). */
  listAccounts(query: ListQuery = {}): Promise<Page<AccountRecord>> {
    return this.#call("GET", `/accounts${listParams(query)}`);
  }

  /** One account with its users, addresses, API keys (by prefix) and webhooks. */
  getAccount(accountId: string): Promise<AccountDetail> {
    return this.#call("GET", `/accounts/${encodeURIComponent(accountId)}`);
  }

  /** API keys whose first characters are `prefix` (4 to 12, e.g. `gh_test_AbCd`). */
  async findApiKeys(prefix: string): Promise<ApiKeyRecord[]> {
    const q = new URLSearchParams({ prefix });
    return (await this.#call<{ data: ApiKeyRecord[] }>("GET", `/api-keys?${q}`)).data;
  }

  /** A past webhook delivery, signed afresh under its webhook's secret (for a replay). */
  getDelivery(deliveryId: string): Promise<SignedDelivery> {
    return this.#call("GET", `/deliveries/${encodeURIComponent(deliveryId)}`);
  }

  /** Registers an account. */
  createAccount(
    input: { name: string; api_access?: boolean; sandbox?: boolean },
  ): Promise<{ account_id: string }> {
    return this.#call("POST", "/accounts", input);
  }

  /** Closes/reopens an account or changes its API access. */
  updateAccount(
    accountId: string,
    change: { status?: "open" | "closed"; api_access?: boolean },
  ): Promise<ActionResult> {
    return this.#call("PATCH", `/accounts/${accountId}`, change);
  }

  /** Adds a user. */
  createUser(accountId: string, fullName: string): Promise<{ user_id: string }> {
    return this.#call("POST", `/accounts/${accountId}/users`, { full_name: fullName });
  }

  /** Adds an address for a user. */
  createAddress(
    accountId: string,
    userId: string,
    label?: string,
  ): Promise<{ address_id: string }> {
    return this.#call("POST", `/accounts/${accountId}/addresses`, { user_id: userId, label });
  }

  /** Creates an API key; `api_key` is shown only here. */
  createApiKey(accountId: string, label?: string): Promise<{ key_id: string; api_key: string }> {
    return this.#call("POST", `/accounts/${accountId}/api-keys`, { label });
  }

  /** Revokes a key. */
  revokeApiKey(keyId: string): Promise<ActionResult> {
    return this.#call("POST", `/api-keys/${keyId}/revoke`);
  }

  /** Registers a webhook; `secret` is shown only here. */
  registerWebhook(
    accountId: string,
    url: string,
    events?: MailEventType[],
  ): Promise<{ webhook_id: string; secret: string }> {
    return this.#call("POST", `/accounts/${accountId}/webhooks`, { url, events });
  }

  /**
   * Deactivates a webhook (idempotent): nothing more is delivered to it and its pending
   * deliveries end as failed; it stays listed with `active: false` and its delivery log.
   */
  deactivateWebhook(webhookId: string): Promise<ActionResult> {
    return this.#call("POST", `/webhooks/${encodeURIComponent(webhookId)}/deactivate`);
  }

  /** A webhook's delivery log, newest first (at most 100). */
  async listDeliveries(webhookId: string): Promise<DeliveryLog[]> {
    return (await this.#call<{ data: DeliveryLog[] }>("GET", `/webhooks/${webhookId}/deliveries`))
      .data;
  }

  /** Sends a past delivery's event again as a new delivery; resolves to its id. */
  redeliver(deliveryId: string): Promise<{ delivery_id: string }> {
    return this.#call("POST", `/deliveries/${encodeURIComponent(deliveryId)}/redeliver`);
  }

  /** One page of an account's items, newest first (`sort_order: "asc"` for oldest first). */
  listAccountItems(accountId: string, query: ListQuery = {}): Promise<Page<MailItem>> {
    return this.#call(
      "GET",
      `/accounts/${encodeURIComponent(accountId)}/items${listParams(query)}`,
    );
  }

  /** One page of an account's system rules (one row per user). */
  listAccountRules(accountId: string, query: ListQuery = {}): Promise<Page<SystemRuleRow>> {
    return this.#call(
      "GET",
      `/accounts/${encodeURIComponent(accountId)}/rules${listParams(query)}`,
    );
  }

  /** Turns a system rule on or off for every user of the account. */
  setAccountRule(
    accountId: string,
    automationName: AutomationName,
    active: boolean,
  ): Promise<ActionResult & { users_changed: number }> {
    return this.#call("PUT", `/accounts/${encodeURIComponent(accountId)}/rules`, {
      automation_name: automationName,
      is_active: active ? 1 : 0,
    });
  }

  /** Records a received item with its envelope image. */
  receiveItem(input: ReceiveItemInput): Promise<{ mail_id: string }> {
    const form = new FormData();
    form.set("address_id", input.address_id);
    form.set("sender_name", input.sender_name);
    if (input.item_type) form.set("item_type", input.item_type);
    if (input.received_at) form.set("received_at", input.received_at.toISOString());
    form.set("envelope", input.envelope, "envelope");
    return this.#call("POST", "/items", form);
  }

  /** Any item by id. */
  getItem(mailId: string): Promise<MailItem> {
    return this.#call("GET", `/items/${mailId}`);
  }

  /** Pending requests, oldest item first (at most `limit`, default 100, up to 1000). */
  async listRequests(limit = 100): Promise<PendingRequest[]> {
    return (await this.#call<{ data: PendingRequest[] }>("GET", `/requests?limit=${limit}`)).data;
  }

  /** Completes an item's pending request; open and rescan need the scan PDF. */
  completeRequest(
    mailId: string,
    input: { scan?: Blob; page_count?: number } = {},
  ): Promise<ActionResult> {
    const form = new FormData();
    if (input.scan) form.set("scan", input.scan, "scan.pdf");
    if (input.page_count !== undefined) form.set("page_count", String(input.page_count));
    return this.#call("POST", `/items/${mailId}/complete`, form);
  }

  /** Fails an item's pending request: it returns to the state before. */
  failRequest(mailId: string, reason: string): Promise<ActionResult> {
    return this.#call("POST", `/items/${mailId}/fail`, { reason });
  }
}
