/**
 * A key in one step: the sandbox account that `deno task mail` and `deno task start` prepare
 * (made on the first start and reused after) — a sandbox account named "Sandbox" with a user,
 * an address that has sample items, and a fresh `gh_test_` key each start (keys are stored as
 * hashes and shown once, so the previous start's key cannot be shown again: it is revoked, and
 * keys do not pile up) — and the lines they print about it.
 *
 * @module
 */
import { createAccount, createAddress, createApiKey, createUser } from "./accounts.ts";
import type { BlobStore } from "./blobs.ts";
import { randomToken } from "./crypto.ts";
import type { MailDb } from "./db.ts";
import { receiveItem } from "./items.ts";
import { envelopeSvg } from "./sample_files.ts";

/** What the sandbox holds, with the new key. */
export interface SandboxKey {
  /** The sandbox account. */
  accountId: string;
  /** Its address that holds the sample items. */
  addressId: string;
  /** A new sandbox key (`gh_test_...`), shown only now. */
  apiKey: string;
  /** Items of the account. */
  items: number;
}

const SENDERS = ["City Water Department", "ACME Bank", "Tax Office"];

/**
 * Finds or makes the sandbox account, gives its address sample items if it has none, revokes
 * the keys an earlier start made (those labelled `label` that are not revoked yet) and creates
 * a new key labelled `label`. Keys with other labels (made through the mailroom API) are left
 * alone.
 */
export async function prepareSandbox(
  db: MailDb,
  blobs: BlobStore,
  label: string,
): Promise<SandboxKey> {
  let found = await db.execute(
    "SELECT a.id AS account_id, d.id AS address_id FROM mail_accounts a " +
      "JOIN mail_addresses d ON d.account_id = a.id " +
      "WHERE a.sandbox = 1 AND a.name = 'Sandbox' AND a.status = 'open' ORDER BY a.id, d.id LIMIT 1",
  );
  if (!found.rows[0]) {
    const accountId = await createAccount(db, { name: "Sandbox", sandbox: true });
    const userId = await createUser(db, accountId, "Sandbox User");
    const addressId = await createAddress(db, accountId, userId, "Sandbox mailbox");
    found = { ...found, rows: [{ account_id: accountId, address_id: addressId }] };
  }
  const accountId = String(found.rows[0].account_id);
  const addressId = String(found.rows[0].address_id);
  const count = async () =>
    Number(
      (await db.execute({
        sql: "SELECT count(*) AS n FROM mail_items WHERE account_id = ?",
        args: [accountId],
      })).rows[0].n,
    );
  if (await count() === 0) {
    for (const sender of SENDERS) {
      const coverKey = `covers/${randomToken(16)}.svg`;
      await blobs.put(coverKey, envelopeSvg(sender));
      await receiveItem(db, {
        address_id: addressId,
        sender_name: sender,
        item_type: "letter",
        cover_key: coverKey,
      }, "sandbox");
    }
  }
  await db.write(({ tx, now }) =>
    tx.execute({
      sql: `UPDATE mail_api_keys SET revoked_at = ?
            WHERE account_id = ? AND label = ? AND revoked_at IS NULL`,
      args: [now, accountId, label],
    })
  );
  const { api_key } = await createApiKey(db, accountId, label);
  return { accountId, addressId, apiKey: api_key, items: await count() };
}

/**
 * The lines printed at start: the key, the account, the address with its items, where the
 * reference is, and a curl command that works as printed.
 *
 * @example
 * ```ts
 * import { sandboxLines } from "./sandbox_setup.ts";
 * const lines = sandboxLines("http://127.0.0.1:8787/api/account-docs/v2", {
 *   accountId: "1",
 *   addressId: "1",
 *   apiKey: "gh_test_x",
 *   items: 3,
 * });
 * console.log(lines.at(-1)); // the curl command
 * ```
 */
export function sandboxLines(base: string, sandbox: SandboxKey): string[] {
  return [
    `  sandbox API key:  ${sandbox.apiKey}  (new each start, the previous one revoked; shown only here)`,
    `  sandbox account:  ${sandbox.accountId}`,
    `  sandbox address:  ${sandbox.addressId}  (${sandbox.items} items)`,
    `  reference:        ${base}/docs  (try it: paste the key under Authentication)`,
    `  OpenAPI document: ${base}/openapi.json`,
    "Try:",
    `curl -sS "${base}/items?sort_order=desc&page=1" -H "x-api-key: ${sandbox.apiKey}"`,
  ];
}
