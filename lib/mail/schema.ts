/**
 * Tables of the mail-scanning server (all prefixed `mail_`, so they share a database with the
 * rest of an app). Idempotent; run by `MailDb.migrate()`.
 *
 * Times are epoch milliseconds. Ids are integer row ids, shown as decimal strings on the wire.
 *
 * @module
 */

/** SQL condition true for items with a pending request (matches the partial index). */
export const PENDING_SQL =
  "status IN ('open_requested','rescan_requested','shred_requested','discard_requested')";

/** The DDL, one statement per entry. */
export const MAIL_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS mail_accounts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open',
    api_access INTEGER NOT NULL DEFAULT 1,
    sandbox INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS mail_users (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES mail_accounts(id),
    full_name TEXT NOT NULL,
    auto_scan INTEGER NOT NULL DEFAULT 0,
    auto_shred INTEGER NOT NULL DEFAULT 0,
    auto_discard INTEGER NOT NULL DEFAULT 0,
    last_changed_at INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS mail_users_account ON mail_users(account_id, id)`,
  `CREATE TABLE IF NOT EXISTS mail_addresses (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES mail_accounts(id),
    user_id INTEGER NOT NULL REFERENCES mail_users(id),
    label TEXT NOT NULL,
    created_at INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS mail_api_keys (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES mail_accounts(id),
    key_hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  )`,
  `CREATE TABLE IF NOT EXISTS mail_items (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL,
    address_id INTEGER NOT NULL,
    user_id INTEGER NOT NULL,
    sender_name TEXT NOT NULL,
    item_type TEXT NOT NULL,
    page_count INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    status_before TEXT,
    last_cancelled TEXT,
    after_open TEXT,
    request_options TEXT,
    cover_key TEXT,
    pdf_key TEXT,
    received_at INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS mail_items_account_received
    ON mail_items(account_id, received_at, id)`,
  `CREATE INDEX IF NOT EXISTS mail_items_pending ON mail_items(status, id) WHERE ${PENDING_SQL}`,
  `CREATE TABLE IF NOT EXISTS mail_item_history (
    id INTEGER PRIMARY KEY,
    item_id INTEGER NOT NULL,
    status TEXT NOT NULL,
    source TEXT NOT NULL,
    note TEXT,
    changed_at INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS mail_item_history_item ON mail_item_history(item_id, id)`,
  `CREATE TABLE IF NOT EXISTS mail_webhooks (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES mail_accounts(id),
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    events TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS mail_webhooks_account ON mail_webhooks(account_id)`,
  `CREATE TABLE IF NOT EXISTS mail_webhook_deliveries (
    id INTEGER PRIMARY KEY,
    webhook_id INTEGER NOT NULL REFERENCES mail_webhooks(id),
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    created_at INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS mail_webhook_deliveries_hook ON mail_webhook_deliveries(webhook_id, id)`,
  `CREATE INDEX IF NOT EXISTS mail_webhook_deliveries_pending
    ON mail_webhook_deliveries(state) WHERE state = 'pending'`,
  `CREATE TABLE IF NOT EXISTS mail_webhook_attempts (
    id INTEGER PRIMARY KEY,
    delivery_id INTEGER NOT NULL REFERENCES mail_webhook_deliveries(id),
    attempt INTEGER NOT NULL,
    at INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS mail_webhook_attempts_delivery ON mail_webhook_attempts(delivery_id)`,
  `CREATE INDEX IF NOT EXISTS mail_api_keys_prefix ON mail_api_keys(prefix)`,
  // Wrong-credential throttle (auth_throttle.ts): failures per client and per credential.
  `CREATE TABLE IF NOT EXISTS mail_auth_failures (
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    failures INTEGER NOT NULL,
    last_failure_at INTEGER NOT NULL,
    blocked_until INTEGER NOT NULL,
    PRIMARY KEY (scope, subject)
  )`,
  // Clients that used a credential successfully (exempt from that credential's backoff).
  `CREATE TABLE IF NOT EXISTS mail_auth_known (
    credential TEXT NOT NULL,
    client TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (credential, client)
  )`,
];
