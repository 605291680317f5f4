/**
 * What the mailroom can look up about what it created: accounts (paged), one account with its
 * users, addresses, API keys (by prefix, never the key) and webhooks (never the secret), and
 * API keys found by the prefix a customer quotes (`gh_test_AbCd`).
 *
 * @module
 */
import type { MailDb } from "./db.ts";
import { MailServerError } from "./errors.ts";
import { unknownAccount } from "./not_found.ts";
import { formatTime, type Page, PAGE_SIZE, type SortOrder } from "./types.ts";

/** An account as the mailroom lists it. */
export interface AccountRecord {
  /** Account id. */
  account_id: string;
  /** Display name. */
  name: string;
  /** `open` or `closed`. */
  status: "open" | "closed";
  /** Developer API access. */
  api_access: boolean;
  /** Sandbox account (its keys start `gh_test_`). */
  sandbox: boolean;
  /** Creation time, `YYYY-MM-DD HH:MM:SS` UTC. */
  created_at: string;
}

/** A user of an account. */
export interface UserRecord {
  /** User id. */
  user_id: string;
  /** Full name. */
  full_name: string;
}

/** An address of an account. */
export interface AddressRecord {
  /** Address id (the `address_id` of the customer API). */
  address_id: string;
  /** The user it belongs to. */
  user_id: string;
  /** Label. */
  label: string;
  /** Creation time. */
  created_at: string;
}

/** An API key as stored: its prefix, never the key. */
export interface ApiKeyRecord {
  /** Key id (for revocation). */
  key_id: string;
  /** The key's account. */
  account_id: string;
  /** First 12 characters of the key. */
  prefix: string;
  /** Label given at creation. */
  label: string;
  /** Creation time. */
  created_at: string;
  /** Revocation time, or null while the key works. */
  revoked_at: string | null;
}

/** A webhook as stored: never its secret. */
export interface WebhookRecord {
  /** Webhook id. */
  webhook_id: string;
  /** Where deliveries go. */
  url: string;
  /** Event types it receives. */
  events: string[];
  /** Active (deliveries are made). */
  active: boolean;
  /** Creation time. */
  created_at: string;
}

/** One account with everything the mailroom created for it. */
export interface AccountDetail extends AccountRecord {
  /** Its users, oldest first. */
  users: UserRecord[];
  /** Its addresses, oldest first. */
  addresses: AddressRecord[];
  /** Its API keys, oldest first (revoked ones included). */
  api_keys: ApiKeyRecord[];
  /** Its webhooks, oldest first. */
  webhooks: WebhookRecord[];
}

const time = (v: unknown): string => formatTime(Number(v));

function accountOf(r: Record<string, unknown>): AccountRecord {
  return {
    account_id: String(r.id),
    name: String(r.name),
    status: String(r.status) === "closed" ? "closed" : "open",
    api_access: Boolean(Number(r.api_access)),
    sandbox: Boolean(Number(r.sandbox)),
    created_at: time(r.created_at),
  };
}

function keyOf(r: Record<string, unknown>): ApiKeyRecord {
  return {
    key_id: String(r.id),
    account_id: String(r.account_id),
    prefix: String(r.prefix),
    label: String(r.label),
    created_at: time(r.created_at),
    revoked_at: r.revoked_at === null ? null : time(r.revoked_at),
  };
}

/** One page of accounts by creation, newest first (`asc`: oldest first). */
export async function listAccounts(
  db: MailDb,
  page: number,
  sortOrder: SortOrder,
): Promise<Page<AccountRecord>> {
  const [rows, count] = await Promise.all([
    db.execute({
      sql: `SELECT id, name, status, api_access, sandbox, created_at FROM mail_accounts
            ORDER BY id ${sortOrder === "asc" ? "ASC" : "DESC"} LIMIT ? OFFSET ?`,
      args: [PAGE_SIZE, (page - 1) * PAGE_SIZE],
    }),
    db.execute("SELECT count(*) AS n FROM mail_accounts"),
  ]);
  return {
    data: rows.rows.map(accountOf),
    current_page: page,
    per_page: PAGE_SIZE,
    total: Number(count.rows[0].n),
  };
}

/** One account with its users, addresses, keys and webhooks; 9410 naming the next step if unknown. */
export async function getAccount(db: MailDb, accountId: string): Promise<AccountDetail> {
  const [acct, users, addresses, keys, hooks] = await Promise.all([
    db.execute({
      sql:
        "SELECT id, name, status, api_access, sandbox, created_at FROM mail_accounts WHERE id = ?",
      args: [accountId],
    }),
    db.execute({
      sql: "SELECT id, full_name FROM mail_users WHERE account_id = ? ORDER BY id",
      args: [accountId],
    }),
    db.execute({
      sql: `SELECT id, user_id, label, created_at FROM mail_addresses WHERE account_id = ?
            ORDER BY id`,
      args: [accountId],
    }),
    db.execute({
      sql: `SELECT id, account_id, prefix, label, created_at, revoked_at FROM mail_api_keys
            WHERE account_id = ? ORDER BY id`,
      args: [accountId],
    }),
    db.execute({
      sql: `SELECT id, url, events, active, created_at FROM mail_webhooks WHERE account_id = ?
            ORDER BY id`,
      args: [accountId],
    }),
  ]);
  if (!acct.rows[0]) throw unknownAccount(accountId);
  return {
    ...accountOf(acct.rows[0]),
    users: users.rows.map((r) => ({ user_id: String(r.id), full_name: String(r.full_name) })),
    addresses: addresses.rows.map((r) => ({
      address_id: String(r.id),
      user_id: String(r.user_id),
      label: String(r.label),
      created_at: time(r.created_at),
    })),
    api_keys: keys.rows.map(keyOf),
    webhooks: hooks.rows.map((r) => ({
      webhook_id: String(r.id),
      url: String(r.url),
      events: String(r.events).split(","),
      active: Boolean(Number(r.active)),
      created_at: time(r.created_at),
    })),
  };
}

const PREFIX = /^[A-Za-z0-9_-]{4,12}$/;

/**
 * API keys whose first characters are `prefix` (4 to 12 characters of a key, e.g. the
 * `gh_test_AbCd` a customer quotes), at most 100, newest first.
 */
export async function findApiKeys(db: MailDb, prefix: string): Promise<ApiKeyRecord[]> {
  if (!PREFIX.test(prefix)) {
    throw new MailServerError(
      19,
      "prefix must be the first 4 to 12 characters of a key, e.g. ?prefix=gh_test_AbCd",
    );
  }
  const r = await db.execute({
    sql: `SELECT id, account_id, prefix, label, created_at, revoked_at FROM mail_api_keys
          WHERE substr(prefix, 1, ?) = ? ORDER BY id DESC LIMIT 100`,
    args: [prefix.length, prefix],
  });
  return r.rows.map(keyOf);
}
