/**
 * Mail-scanning API under load: 1,000,000 items across 1,000 accounts in a libSQL file, served
 * over HTTP on loopback. Measures `GET /items` pages (random account, page and order) and an
 * action over 100 mail_ids (open, then cancel open). Goal: page p99 under 20 ms.
 *
 * The data file is generated once with the sqlite3 CLI (progress printed) and cached in
 * `bench/.data/` (gitignored); reruns skip generation.
 *
 * ```sh
 * deno run -A bench/mail_bench.ts      # prints p50/p99 (MAIL_BENCH_N=1000 requests per series)
 * deno bench -A bench/mail_bench.ts    # the same two operations as Deno.bench entries
 * ```
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { createMailServer, MailClient, MemoryBlobStore } from "../mail.ts";
import { mailInternals } from "../lib/mail/server.ts";
import { MAIL_SCHEMA } from "../lib/mail/schema.ts";
import { sha256Hex } from "../lib/mail/crypto.ts";
import { envelopeSvg, samplePdf } from "../lib/mail/sample_files.ts";

const ACCOUNTS = 1000;
const PER_ACCOUNT = 1000;
const ITEMS = ACCOUNTS * PER_ACCOUNT;
const OPENED_FROM = 900; // the last 100 items of each account are opened
const T0 = Date.parse("2025-01-01T00:00:00Z");
const dataDir = new URL("./.data/", import.meta.url).pathname;
const dbPath = `${dataDir}mail-1m.db`;

/** The raw API key of bench account `i`. */
const keyOf = (i: number) => `gh_live_bench_account_${i}`;

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function generate(): Promise<void> {
  await Deno.mkdir(dataDir, { recursive: true });
  const tmp = `${dbPath}.tmp`;
  for (const suffix of ["", "-wal", "-shm"]) await Deno.remove(tmp + suffix).catch(() => {});
  const started = performance.now();
  console.log(`generating ${ITEMS.toLocaleString("en")} items in ${dbPath} (sqlite3) ...`);
  const tables = MAIL_SCHEMA.filter((s) => s.trimStart().startsWith("CREATE TABLE"));
  const n = (from: number, to: number) =>
    `WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to})`;
  const sql: string[] = [
    "PRAGMA journal_mode=OFF;",
    "PRAGMA synchronous=OFF;",
    ...tables.map((t) => t + ";"),
    "BEGIN;",
    `${n(1, ACCOUNTS)} INSERT INTO mail_accounts (id, name, created_at)
       SELECT i, 'Bench ' || i, ${T0} FROM n;`,
    `${n(1, ACCOUNTS)} INSERT INTO mail_users (id, account_id, full_name, last_changed_at)
       SELECT i, i, 'User ' || i, ${T0} FROM n;`,
    `${n(1, ACCOUNTS)} INSERT INTO mail_addresses (id, account_id, user_id, label, created_at)
       SELECT i, i, i, 'Box ' || i, ${T0} FROM n;`,
    "COMMIT;",
  ];
  const chunk = 100_000;
  for (let from = 1; from <= ITEMS; from += chunk) {
    const to = from + chunk - 1;
    const opened = `((i - 1) / ${ACCOUNTS}) >= ${OPENED_FROM}`;
    sql.push(
      "BEGIN;",
      `${n(from, to)} INSERT INTO mail_items (id, account_id, address_id, user_id, sender_name,
         item_type, page_count, status, cover_key, pdf_key, received_at)
       SELECT i, ((i - 1) % ${ACCOUNTS}) + 1, ((i - 1) % ${ACCOUNTS}) + 1,
         ((i - 1) % ${ACCOUNTS}) + 1, 'Sender ' || (i % 977),
         CASE i % 10 WHEN 0 THEN 'package' ELSE 'letter' END,
         CASE WHEN ${opened} THEN 2 ELSE 0 END,
         CASE WHEN ${opened} THEN 'opened' ELSE 'received' END,
         'covers/bench.svg', CASE WHEN ${opened} THEN 'scans/bench.pdf' END,
         ${T0} + i * 60000 FROM n;`,
      `${n(from, to)} INSERT INTO mail_item_history (item_id, status, source, changed_at)
       SELECT i, 'received', 'mailroom', ${T0} + i * 60000 FROM n;`,
      `${n(from, to)} INSERT INTO mail_item_history (item_id, status, source, changed_at)
       SELECT i, s.status, s.source, ${T0} + i * 60000 + s.d FROM n,
         (SELECT 'open_requested' AS status, 'customer' AS source, 1000 AS d
          UNION ALL SELECT 'opened', 'mailroom', 2000) AS s WHERE ${opened};`,
      "COMMIT;",
      `.print items ${to.toLocaleString("en")} / ${ITEMS.toLocaleString("en")}`,
    );
  }
  const proc = new Deno.Command("sqlite3", {
    args: [tmp],
    stdin: "piped",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const writer = proc.stdin.getWriter();
  await writer.write(new TextEncoder().encode(sql.join("\n") + "\n"));
  await writer.close();
  const status = await proc.status;
  if (!status.success) throw new Error("sqlite3 failed (is the sqlite3 CLI installed?)");
  console.log("indexing and keys ...");
  const client = createClient({ url: `file:${tmp}` });
  await client.batch([...MAIL_SCHEMA], "write"); // creates the indexes
  const keys = [];
  for (let i = 1; i <= ACCOUNTS; i++) {
    keys.push({
      sql: `INSERT INTO mail_api_keys (account_id, key_hash, prefix, created_at)
            VALUES (?, ?, ?, ?)`,
      args: [i, await sha256Hex(keyOf(i)), keyOf(i).slice(0, 12), T0],
    });
  }
  await client.batch(keys, "write");
  await client.execute("ANALYZE");
  client.close();
  await Deno.rename(tmp, dbPath);
  console.log(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (!(await exists(dbPath))) await generate();

const client = createClient({ url: `file:${dbPath}` });
const blobs = new MemoryBlobStore();
await blobs.put("covers/bench.svg", envelopeSvg("Bench"));
await blobs.put("scans/bench.pdf", samplePdf("Bench"));
const mail = await createMailServer({ client, blobs, rateLimit: false, signingSecret: "bench" });
const count = await mailInternals(mail).db.execute("SELECT count(*) AS n FROM mail_items");
if (Number(count.rows[0].n) !== ITEMS) {
  throw new Error(`${dbPath} holds ${count.rows[0].n} items; delete it to regenerate`);
}
const http = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, mail.fetch);
const base = `http://127.0.0.1:${http.addr.port}/api/account-docs/v2`;
const clients = Array.from(
  { length: ACCOUNTS },
  (_, i) => new MailClient({ baseUrl: base, apiKey: keyOf(i + 1), retries: 0 }),
);
const rand = (n: number) => Math.floor(Math.random() * n);

async function page(): Promise<void> {
  const p = await clients[rand(ACCOUNTS)].listItems({
    page: 1 + rand(PER_ACCOUNT / 20),
    sort_order: Math.random() < 0.5 ? "asc" : "desc",
  });
  if (p.data.length !== 20) throw new Error("short page");
}

/** 100 received items of one account (ids are k * 1000 + account). */
function window100(): { account: number; ids: string[] } {
  const account = 1 + rand(ACCOUNTS);
  const k0 = rand(OPENED_FROM - 100);
  return {
    account,
    ids: Array.from({ length: 100 }, (_, j) => String((k0 + j) * ACCOUNTS + account)),
  };
}

async function openThenCancel(timings?: { open: number[]; cancel: number[] }): Promise<void> {
  const { account, ids } = window100();
  const c = clients[account - 1];
  let t = performance.now();
  await c.open(String(account), ids);
  timings?.open.push(performance.now() - t);
  t = performance.now();
  await c.cancelOpen(String(account), ids);
  timings?.cancel.push(performance.now() - t);
}

function stats(name: string, ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2);
  const mean = (s.reduce((a, b) => a + b, 0) / s.length).toFixed(2);
  return `${name.padEnd(34)} n=${s.length}  p50 ${q(0.5)} ms  p99 ${q(0.99)} ms  mean ${mean} ms`;
}

if (import.meta.main) {
  const N = Number(Deno.env.get("MAIL_BENCH_N") ?? 1000);
  for (let i = 0; i < 100; i++) await page(); // warm up
  const pages: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await page();
    pages.push(performance.now() - t);
  }
  const actions = { open: [] as number[], cancel: [] as number[] };
  for (let i = 0; i < 10; i++) await openThenCancel();
  for (let i = 0; i < Math.max(50, N / 5); i++) await openThenCancel(actions);
  console.log(
    `mail API, ${ITEMS.toLocaleString("en")} items / ${ACCOUNTS} accounts, HTTP on loopback`,
  );
  console.log(stats("GET /items (page of 20)", pages));
  console.log(stats("POST open, 100 mail_ids", actions.open));
  console.log(stats("POST open/cancel, 100 mail_ids", actions.cancel));
  const p99 = [...pages].sort((a, b) => a - b)[Math.floor(0.99 * pages.length)];
  console.log(`page p99 goal < 20 ms: ${p99 < 20 ? "met" : "NOT met"}`);
  await mail.close();
  await http.shutdown();
  client.close();
} else {
  Deno.bench("mail: GET /items page (1M items, 1k accounts)", async () => await page());
  Deno.bench("mail: open + cancel over 100 mail_ids", async () => await openThenCancel());
}
