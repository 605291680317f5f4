/**
 * The typed client of the mail-scanning API. Works against this server and the peer service
 * (PostScan Mail): it tolerates the peer's empty-list quirk (`{"data":["No items are received
 * yet."]}`), retries 429 and 5xx answers with backoff honouring `Retry-After`, and throws
 * `MailApiError` carrying the HTTP status and the body code.
 *
 * @module
 */
import type { MailErrorCode } from "./errors.ts";
import type { ItemAction } from "./lifecycle.ts";
import type { AutomationName } from "./rules.ts";
import type { ActionResult, MailItem, Page, SortOrder, SystemRuleRow } from "./types.ts";

/** Client settings. */
export interface MailClientOptions {
  /** API base URL, e.g. `https://host/api/account-docs/v2` (a bare origin gets that path). */
  baseUrl: string;
  /** The account's API key, sent as `x-api-key`. */
  apiKey: string;
  /** fetch to use (default global fetch). */
  fetch?: typeof fetch;
  /** Retries of a 429 or 5xx answer or a network error (default 3). */
  retries?: number;
  /** First retry delay when no `Retry-After` is given; doubles each retry (default 500 ms). */
  retryDelayMs?: number;
  /** Longest wait before a retry, `Retry-After` included (default 30000 ms). */
  maxRetryDelayMs?: number;
}

/** A list query. */
export interface ListQuery {
  /** Page number from 1 (default 1). */
  page?: number;
  /** `asc` or `desc` (default desc). */
  sort_order?: SortOrder;
}

/** Options of shred and discard. */
export interface DestroyOptions {
  /** Also delete the digital copy (scan) once done. */
  delete_digital_copy?: boolean;
}

/** Options of rescan. */
export interface RescanOptions {
  /** Kind of rescan, 1–3. */
  rescan_type?: number;
  /** What is wrong with the scan. */
  comment?: string;
}

/** Input of `createTestItem` (sandbox keys only). */
export interface TestItemInput {
  /** Address (default the account's first). */
  address_id?: string;
  /** Sender name (default "Sandbox Sender"). */
  sender_name?: string;
  /** Item type (default letter). */
  item_type?: string;
}

/**
 * An error answer of the API: `status` is the HTTP status, `code` the body code (see
 * `MailErrorCode`; the peer has a few more), `retryAfter` the `Retry-After` seconds if any.
 *
 * @example
 * ```ts
 * import { MailApiError, MailClient } from "./client.ts";
 * const client = new MailClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "wrong" });
 * try {
 *   await client.listItems();
 * } catch (err) {
 *   if (err instanceof MailApiError && err.code === 429) console.log("bad key");
 * }
 * ```
 */
export class MailApiError extends Error {
  /** HTTP status. */
  readonly status: number;
  /** Body code (0 when the body had none). */
  readonly code: MailErrorCode | number;
  /** `Retry-After` in seconds, or null. */
  readonly retryAfter: number | null;

  /** Creates the error from an answer's parts. */
  constructor(status: number, code: number, message: string, retryAfter: number | null = null) {
    super(message);
    this.name = "MailApiError";
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

function retryAfterMs(value: string | null): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/**
 * Client of the customer API.
 *
 * @example
 * ```ts
 * import { MailClient } from "./client.ts";
 * const client = new MailClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "gh_test_..." });
 * for await (const item of client.items({ sort_order: "asc" })) {
 *   if (item.current_status === "received") await client.open(item.address_id, [item.mail_id]);
 * }
 * ```
 */
export class MailClient {
  /** Normalized base URL, without a trailing slash. */
  readonly baseUrl: string;
  #key: string;
  #fetch: typeof fetch;
  #retries: number;
  #delay: number;
  #maxDelay: number;

  /** Creates the client. */
  constructor(options: MailClientOptions) {
    const url = new URL(options.baseUrl);
    const path = url.pathname.replace(/\/+$/, "");
    this.baseUrl = url.origin + (path === "" ? "/api/account-docs/v2" : path);
    this.#key = options.apiKey;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#retries = options.retries ?? 3;
    this.#delay = options.retryDelayMs ?? 500;
    this.#maxDelay = options.maxRetryDelayMs ?? 30_000;
  }

  /** Sends a request and returns the parsed JSON of a 2xx answer; throws `MailApiError`. */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    for (let attempt = 0;; attempt++) {
      let res: Response;
      try {
        res = await this.#fetch(this.baseUrl + path, {
          method,
          headers: {
            "x-api-key": this.#key,
            accept: "application/json",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (err) {
        if (attempt >= this.#retries) throw err;
        await this.#sleep(null, attempt);
        continue;
      }
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = text === "" ? null : JSON.parse(text);
      } catch { /* not JSON */ }
      if (res.ok) return parsed as T;
      const retryable = res.status === 429 || res.status >= 500;
      if (retryable && attempt < this.#retries) {
        await this.#sleep(retryAfterMs(res.headers.get("retry-after")), attempt);
        continue;
      }
      const err = (parsed ?? {}) as { code?: unknown; message?: unknown };
      const ra = retryAfterMs(res.headers.get("retry-after"));
      throw new MailApiError(
        res.status,
        typeof err.code === "number" ? err.code : 0,
        typeof err.message === "string" ? err.message : `HTTP ${res.status}`,
        ra === null ? null : Math.ceil(ra / 1000),
      );
    }
  }

  #sleep(retryAfter: number | null, attempt: number): Promise<void> {
    const ms = Math.min(this.#maxDelay, retryAfter ?? this.#delay * 2 ** attempt);
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  async #page<T>(path: string, query: ListQuery): Promise<Page<T>> {
    const params = new URLSearchParams();
    if (query.sort_order) params.set("sort_order", query.sort_order);
    if (query.page !== undefined) params.set("page", String(query.page));
    const qs = params.size ? `?${params}` : "";
    const raw = await this.request<Partial<Page<unknown>>>("GET", path + qs);
    // the peer answers an empty list as {"data":["No items are received yet."]}
    const data = (Array.isArray(raw?.data) ? raw.data : []).filter(
      (row) => typeof row === "object" && row !== null,
    ) as T[];
    return {
      data,
      current_page: Number(raw?.current_page ?? query.page ?? 1),
      per_page: Number(raw?.per_page ?? 20),
      total: Number(raw?.total ?? data.length),
    };
  }

  async *#all<T>(path: string, query: ListQuery): AsyncGenerator<T> {
    for (let page = query.page ?? 1;; page++) {
      const p = await this.#page<T>(path, { ...query, page });
      yield* p.data;
      if (p.data.length === 0 || page * p.per_page >= p.total) return;
    }
  }

  /** One page of the account's items (`GET /items`). */
  listItems(query: ListQuery = {}): Promise<Page<MailItem>> {
    return this.#page("/items", query);
  }

  /** Every item, page after page. */
  items(query: Omit<ListQuery, "page"> = {}): AsyncGenerator<MailItem> {
    return this.#all("/items", query);
  }

  /** One page of system rule rows. */
  listSystemRules(query: ListQuery = {}): Promise<Page<SystemRuleRow>> {
    return this.#page("/user-defined-rules/system-user-defined-rules", query);
  }

  /** Every system rule row. */
  systemRules(query: Omit<ListQuery, "page"> = {}): AsyncGenerator<SystemRuleRow> {
    return this.#all("/user-defined-rules/system-user-defined-rules", query);
  }

  /** Enables or disables a system rule for all users. */
  updateSystemRule(name: AutomationName, active: boolean | 0 | 1): Promise<ActionResult> {
    return this.request("PUT", "/user-defined-rules/update-system-user-defined-rule", {
      automation_name: name,
      is_active: active ? 1 : 0,
    });
  }

  #action(
    action: ItemAction,
    cancel: boolean,
    addressId: string,
    mailIds: string | string[],
    options: Record<string, unknown> = {},
  ): Promise<ActionResult> {
    const ids = Array.isArray(mailIds) ? mailIds : [mailIds];
    return this.request(
      "POST",
      `/addresses/${encodeURIComponent(addressId)}/items/actions/${action}${
        cancel ? "/cancel" : ""
      }`,
      { mail_ids: ids, ...options },
    );
  }

  /** Requests opening (scanning) items. */
  open(addressId: string, mailIds: string | string[]): Promise<ActionResult> {
    return this.#action("open", false, addressId, mailIds);
  }

  /** Cancels pending open requests. */
  cancelOpen(addressId: string, mailIds: string | string[]): Promise<ActionResult> {
    return this.#action("open", true, addressId, mailIds);
  }

  /** Requests a rescan of opened items. */
  rescan(
    addressId: string,
    mailIds: string | string[],
    options: RescanOptions = {},
  ): Promise<ActionResult> {
    return this.#action("rescan", false, addressId, mailIds, { ...options });
  }

  /** Cancels pending rescan requests. */
  cancelRescan(addressId: string, mailIds: string | string[]): Promise<ActionResult> {
    return this.#action("rescan", true, addressId, mailIds);
  }

  /** Requests shredding items. */
  shred(
    addressId: string,
    mailIds: string | string[],
    options: DestroyOptions = {},
  ): Promise<ActionResult> {
    return this.#action("shred", false, addressId, mailIds, { ...options });
  }

  /** Cancels pending shred requests. */
  cancelShred(addressId: string, mailIds: string | string[]): Promise<ActionResult> {
    return this.#action("shred", true, addressId, mailIds);
  }

  /** Requests discarding items. */
  discard(
    addressId: string,
    mailIds: string | string[],
    options: DestroyOptions = {},
  ): Promise<ActionResult> {
    return this.#action("discard", false, addressId, mailIds, { ...options });
  }

  /** Cancels pending discard requests. */
  cancelDiscard(addressId: string, mailIds: string | string[]): Promise<ActionResult> {
    return this.#action("discard", true, addressId, mailIds);
  }

  /** Sandbox keys: creates a test item; answers its `mail_id`. */
  createTestItem(input: TestItemInput = {}): Promise<ActionResult & { mail_id: string }> {
    return this.request("POST", "/sandbox/items", input);
  }

  /** Sandbox keys: completes the pending request of an item (with a generated scan). */
  completeTestRequest(mailId: string): Promise<ActionResult> {
    return this.request("POST", `/sandbox/items/${encodeURIComponent(mailId)}/complete`);
  }

  /**
   * Downloads a signed file link of an item (`cover_image`, `pdf_content`). The link is its
   * own credential: the API key is not sent. Throws `MailApiError` (9403 for an expired link:
   * list the items again for fresh ones).
   */
  async downloadFile(link: string): Promise<Uint8Array> {
    const res = await this.#fetch(link, { method: "GET" });
    if (res.ok) return new Uint8Array(await res.arrayBuffer());
    const err = await res.json().catch(() => ({})) as { code?: unknown; message?: unknown };
    throw new MailApiError(
      res.status,
      typeof err.code === "number" ? err.code : 0,
      typeof err.message === "string" ? err.message : `HTTP ${res.status}`,
    );
  }

  /** The server's OpenAPI document. */
  openApi(): Promise<Record<string, unknown>> {
    return this.request("GET", "/openapi.json");
  }
}
