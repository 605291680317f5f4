/**
 * `deno task mail`: the mail-scanning API on its own, on an embedded libSQL file. Prints a
 * ready sandbox API key (a new one each start; keys are shown once) for an account whose
 * address has sample items, the reference's address and a curl command that works as printed
 * (see `sandbox_setup.ts`). Deno only (not part of the npm mirror).
 *
 * Variables: `MAIL_DB` (default `file:.data/mail.db`), `HOST` (default 127.0.0.1), `PORT`
 * (default 8787; 0 picks a free port), `MAIL_OPERATOR_TOKEN` (default a random one, printed),
 * `MAIL_SIGNING_SECRET` (default random per start), `MAIL_BLOB_DIR` (default
 * `.data/mail-blobs`), `MAIL_PUBLIC_URL` (origin of file links; default the request's),
 * `MAIL_WEBHOOK_ALLOW` (comma-separated internal webhook targets allowed all the same, e.g.
 * `127.0.0.1` for `deno task mail:listen`; default none).
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { createMailServer, MAIL_BASE_PATH, mailInternals } from "./server.ts";
import { randomToken } from "./crypto.ts";
import { prepareSandbox, sandboxLines } from "./sandbox_setup.ts";
import { guardInspectorSignal } from "../inspector_signal.ts";
import { preparePrivateLibsqlFile } from "../server/storage/private_files.ts";
import { parseAllowTargets } from "./webhook_targets.ts";

guardInspectorSignal(); // SIGUSR1 must not open Deno's inspector (docs/security.md)
const env = Deno.env.toObject();
const dbUrl = env.MAIL_DB ?? "file:.data/mail.db";
await preparePrivateLibsqlFile(dbUrl); // 0600 (and its -wal, -shm), new directories 0700
const webhookAllow = (env.MAIL_WEBHOOK_ALLOW ?? "").split(",").map((s) => s.trim())
  .filter(Boolean);
try {
  parseAllowTargets(webhookAllow);
} catch (err) {
  console.error(`MAIL_WEBHOOK_ALLOW: ${(err as Error).message}`);
  Deno.exit(2);
}
const client = createClient({ url: dbUrl, timeout: 5_000 }); // busy timeout of file: databases
const operatorToken = env.MAIL_OPERATOR_TOKEN ?? randomToken(24);
const server = await createMailServer({
  client,
  operatorToken,
  signingSecret: env.MAIL_SIGNING_SECRET,
  blobDir: env.MAIL_BLOB_DIR ?? ".data/mail-blobs",
  publicUrl: env.MAIL_PUBLIC_URL || undefined,
  webhooks: { allowTargets: webhookAllow },
});
const { db } = mailInternals(server);
const sandbox = await prepareSandbox(db, server.blobs, "deno task mail");

const http = Deno.serve({
  hostname: env.HOST ?? "127.0.0.1",
  port: Number(env.PORT ?? 8787),
  onListen({ hostname, port }) {
    const base = `http://${hostname}:${port}${MAIL_BASE_PATH}`;
    console.log(`Mail-scanning API on ${base}  (database ${dbUrl})`);
    console.log(`  operator token:   ${operatorToken}  (mailroom API at ${base}/mailroom)`);
    for (const line of sandboxLines(base, sandbox)) console.log(line);
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
