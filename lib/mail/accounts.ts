/**
 * Accounts, their users and addresses, and API keys: registration (mailroom side) and the
 * key check every customer request goes through.
 *
 * API keys are random, shown once at creation, stored only as their SHA-256 hash, scoped to one
 * account and revocable. Live keys start `gh_live_`, sandbox keys `gh_test_`.
 *
 * @module
 */
import type { MailDb } from "./db.ts";
import { randomToken, sha256Hex } from "./crypto.ts";
import { MailServerError } from "./errors.ts";
import { unknownAccount, unknownKey, unknownUser } from "./not_found.ts";

/** Who a valid API key speaks for. */
export interface KeyContext {
  /** Key row id (rate limits count per key). */
  keyId: string;
  /** The key's account. */
  accountId: string;
  /** True for a sandbox account. */
  sandbox: boolean;
}

/** Input of account registration. */
export interface AccountInput {
  /** Display name. */
  name: string;
  /** Developer API access (default true). */
  api_access?: boolean;
  /** Sandbox account: its keys may create test items (default false). */
  sandbox?: boolean;
}

/** A freshly created API key; `api_key` is shown this once. */
export interface CreatedKey {
  /** Key id (for revocation). */
  key_id: string;
  /** The key itself. */
  api_key: string;
}

/** Registers an account; returns its id. */
export async function createAccount(db: MailDb, input: AccountInput): Promise<string> {
  const r = await db.write(({ tx, now }) =>
    tx.execute({
      sql: "INSERT INTO mail_accounts (name, api_access, sandbox, created_at) VALUES (?, ?, ?, ?)",
      args: [input.name, input.api_access === false ? 0 : 1, input.sandbox ? 1 : 0, now],
    })
  );
  return String(r.lastInsertRowid);
}

/** Closes or reopens an account, or changes its API access. Throws 9410 for an unknown account. */
export async function updateAccount(
  db: MailDb,
  accountId: string,
  change: { status?: "open" | "closed"; api_access?: boolean },
): Promise<void> {
  await db.write(async ({ tx }) => {
    const r = await tx.execute({
      sql: `UPDATE mail_accounts SET status = coalesce(?, status),
            api_access = coalesce(?, api_access) WHERE id = ?`,
      args: [
        change.status ?? null,
        change.api_access === undefined ? null : change.api_access ? 1 : 0,
        accountId,
      ],
    });
    if (r.rowsAffected === 0) throw unknownAccount(accountId);
  });
}

async function requireAccount(db: MailDb, accountId: string): Promise<void> {
  const r = await db.execute({
    sql: "SELECT 1 FROM mail_accounts WHERE id = ?",
    args: [accountId],
  });
  if (r.rows.length === 0) throw unknownAccount(accountId);
}

/** Adds a user (rules start inactive); returns its id. */
export async function createUser(
  db: MailDb,
  accountId: string,
  fullName: string,
): Promise<string> {
  await requireAccount(db, accountId);
  const r = await db.write(({ tx, now }) =>
    tx.execute({
      sql: "INSERT INTO mail_users (account_id, full_name, last_changed_at) VALUES (?, ?, ?)",
      args: [accountId, fullName, now],
    })
  );
  return String(r.lastInsertRowid);
}

/** Adds an address for a user of the account; returns its id. */
export async function createAddress(
  db: MailDb,
  accountId: string,
  userId: string,
  label: string,
): Promise<string> {
  const user = await db.execute({
    sql: "SELECT 1 FROM mail_users WHERE id = ? AND account_id = ?",
    args: [userId, accountId],
  });
  if (user.rows.length === 0) throw unknownUser(accountId, userId);
  const r = await db.write(({ tx, now }) =>
    tx.execute({
      sql:
        "INSERT INTO mail_addresses (account_id, user_id, label, created_at) VALUES (?, ?, ?, ?)",
      args: [accountId, userId, label, now],
    })
  );
  return String(r.lastInsertRowid);
}

/** Creates an API key for the account. The key is returned once and stored only as a hash. */
export async function createApiKey(
  db: MailDb,
  accountId: string,
  label = "",
): Promise<CreatedKey> {
  const acct = await db.execute({
    sql: "SELECT sandbox FROM mail_accounts WHERE id = ?",
    args: [accountId],
  });
  if (acct.rows.length === 0) throw unknownAccount(accountId);
  const apiKey = (Number(acct.rows[0].sandbox) ? "gh_test_" : "gh_live_") + randomToken(24);
  const hash = await sha256Hex(apiKey);
  const r = await db.write(({ tx, now }) =>
    tx.execute({
      sql: `INSERT INTO mail_api_keys (account_id, key_hash, prefix, label, created_at)
            VALUES (?, ?, ?, ?, ?)`,
      args: [accountId, hash, apiKey.slice(0, 12), label, now],
    })
  );
  return { key_id: String(r.lastInsertRowid), api_key: apiKey };
}

/** Revokes a key (idempotent). Throws 9410 for an unknown key id. */
export async function revokeApiKey(db: MailDb, keyId: string): Promise<void> {
  await db.write(async ({ tx, now }) => {
    const r = await tx.execute({
      sql: "UPDATE mail_api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?",
      args: [now, keyId],
    });
    if (r.rowsAffected === 0) throw unknownKey(keyId);
  });
}

/** A stored key found by its value (before the revocation and account checks). */
export interface FoundKey {
  /** Key row id. */
  keyId: string;
  /** The key's account. */
  accountId: string;
  /** Revoked, its account closed, or its account without API access. */
  refusal: 431 | 430 | 433 | null;
  /** True for a sandbox account. */
  sandbox: boolean;
}

/** The stored key whose hash matches `apiKey`, or null (also for an over-long value). */
export async function findApiKey(db: MailDb, apiKey: string): Promise<FoundKey | null> {
  if (apiKey.length > 200) return null;
  const r = await db.execute({
    sql: `SELECT k.id, k.account_id, k.revoked_at, a.status, a.api_access, a.sandbox
          FROM mail_api_keys k JOIN mail_accounts a ON a.id = k.account_id
          WHERE k.key_hash = ?`,
    args: [await sha256Hex(apiKey)],
  });
  const row = r.rows[0];
  if (!row) return null;
  return {
    keyId: String(row.id),
    accountId: String(row.account_id),
    refusal: row.revoked_at !== null
      ? 431
      : row.status !== "open"
      ? 430
      : !Number(row.api_access)
      ? 433
      : null,
    sandbox: Boolean(Number(row.sandbox)),
  };
}

/** True when some stored key starts with `prefix` (the first 12 characters of a key). */
export async function keyPrefixExists(db: MailDb, prefix: string): Promise<boolean> {
  const r = await db.execute({
    sql: "SELECT 1 FROM mail_api_keys WHERE prefix = ? LIMIT 1",
    args: [prefix],
  });
  return r.rows.length > 0;
}

/**
 * Checks an `x-api-key` value without throttling: 429 unknown, 431 revoked, 430 account
 * closed, 433 no API access. (The server checks keys through `credentials.ts`, which adds the
 * wrong-key throttle.)
 */
export async function authenticate(db: MailDb, apiKey: string | undefined): Promise<KeyContext> {
  const found = apiKey ? await findApiKey(db, apiKey) : null;
  if (!found) throw new MailServerError(429);
  if (found.refusal !== null) throw new MailServerError(found.refusal);
  return { keyId: found.keyId, accountId: found.accountId, sandbox: found.sandbox };
}

/**
 * Resolves an address for an action: 89 when no such address exists, 9400 when it belongs to
 * another account. Returns the address's user id.
 */
export async function resolveAddress(
  db: MailDb,
  accountId: string,
  addressId: string,
): Promise<{ userId: string }> {
  const notFound = new MailServerError(
    89,
    `Address not found: there is no address ${addressId.slice(0, 40)}. The address_id of ` +
      "your items (GET /items) names your addresses.",
  );
  if (!/^[1-9][0-9]{0,17}$/.test(addressId)) throw notFound;
  const r = await db.execute({
    sql: "SELECT account_id, user_id FROM mail_addresses WHERE id = ?",
    args: [addressId],
  });
  const row = r.rows[0];
  if (!row) throw notFound;
  if (String(row.account_id) !== accountId) {
    throw new MailServerError(
      9400,
      `Address is not registered to account: address ${addressId} belongs to another ` +
        "account. Use an address_id of your own items (GET /items).",
    );
  }
  return { userId: String(row.user_id) };
}
