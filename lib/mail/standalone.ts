/**
 * `deno task mail`: the mail-scanning API on its own, on an embedded libSQL file. Prints a
 * sandbox API key (a new one each start; keys are shown once) and a curl command that works as
 * printed. Deno only (not part of the npm mirror).
 *
 * Variables: `MAIL_DB` (default `file:.data/mail.db`), `HOST` (default 127.0.0.1), `PORT`
 * (default 8787; 0 picks a free port), `MAIL_OPERATOR_TOKEN` (default a random one, printed),
 * `MAIL_SIGNING_SECRET` (default random per start), `MAIL_BLOB_DIR` (default
 * `.data/mail-blobs`), `MAIL_PUBLIC_URL` (origin of file links; default the request's).
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { createMailServer, MAIL_BASE_PATH, mailInternals } from "./server.ts";
import { createAccount, createAddress, createApiKey, createUser } from "./accounts.ts";
import { randomToken } from "./crypto.ts";
import { receiveItem } from "./items.ts";
import { envelopeSvg } from "./sample_files.ts";

const env = Deno.env.toObject();
const dbUrl = env.MAIL_DB ?? "file:.data/mail.db";
if (dbUrl.startsWith("file:")) {
  const path = dbUrl.slice(5);
  if (path.includes("/")) {
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  }
}
const client = createClient({ url: dbUrl });
const operatorToken = env.MAIL_OPERATOR_TOKEN ?? randomToken(24);
const server = await createMailServer({
  client,
  operatorToken,
  signingSecret: env.MAIL_SIGNING_SECRET,
  blobDir: env.MAIL_BLOB_DIR ?? ".data/mail-blobs",
  publicUrl: env.MAIL_PUBLIC_URL || undefined,
});
const { db } = mailInternals(server);

// the sandbox account: made on first start, reused after
let found = await db.execute(
  "SELECT a.id AS account_id, d.id AS address_id FROM mail_accounts a " +
    "JOIN mail_addresses d ON d.account_id = a.id WHERE a.sandbox = 1 AND a.name = 'Sandbox' " +
    "ORDER BY d.id LIMIT 1",
);
if (!found.rows[0]) {
  const accountId = await createAccount(db, { name: "Sandbox", sandbox: true });
  const userId = await createUser(db, accountId, "Sandbox User");
  await createAddress(db, accountId, userId, "Sandbox mailbox");
  found = await db.execute({
    sql: "SELECT account_id, id AS address_id FROM mail_addresses WHERE account_id = ?",
    args: [accountId],
  });
}
const accountId = String(found.rows[0].account_id);
const addressId = String(found.rows[0].address_id);
const count = await db.execute({
  sql: "SELECT count(*) AS n FROM mail_items WHERE account_id = ?",
  args: [accountId],
});
if (Number(count.rows[0].n) === 0) {
  for (const sender of ["City Water Department", "ACME Bank", "Tax Office"]) {
    const coverKey = `covers/${randomToken(16)}.svg`;
    await server.blobs.put(coverKey, envelopeSvg(sender));
    await receiveItem(db, {
      address_id: addressId,
      sender_name: sender,
      item_type: "letter",
      cover_key: coverKey,
    }, "sandbox");
  }
}
const { api_key } = await createApiKey(db, accountId, "deno task mail");

const http = Deno.serve({
  hostname: env.HOST ?? "127.0.0.1",
  port: Number(env.PORT ?? 8787),
  onListen({ hostname, port }) {
    const base = `http://${hostname}:${port}${MAIL_BASE_PATH}`;
    console.log(`Mail-scanning API on ${base}  (database ${dbUrl})`);
    console.log(`  sandbox API key:  ${api_key}`);
    console.log(`  sandbox address:  ${addressId}`);
    console.log(`  operator token:   ${operatorToken}  (mailroom API at ${base}/mailroom)`);
    console.log(`  OpenAPI document: ${base}/openapi.json`);
    console.log("Try:");
    console.log(`curl -sS "${base}/items?sort_order=desc&page=1" -H "x-api-key: ${api_key}"`);
  },
}, server.fetch);

const stop = async () => {
  await server.close();
  await http.shutdown();
  client.close();
  Deno.exit(0);
};
Deno.addSignalListener("SIGINT", stop);
Deno.addSignalListener("SIGTERM", stop);
