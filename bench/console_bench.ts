/**
 * The console's user list on a libSQL file holding 100,000 users: the whole page (session,
 * CSRF token, `listUsers`, rendering) through the app's `fetch`, and `listUsers` alone, with
 * p50/p99 latencies. Searches: an e-mail prefix that matches one person, a name prefix, one
 * letter (thousands of matches), a term that matches nobody; plus the first page and a page
 * deep in the list (keyset cursor).
 *
 * The database is generated once (progress on stderr) and cached as
 * `bench/.data/console_100k.db` (names from 40 first names × 60 surnames, every fifth user
 * without a name).
 *
 * ```sh
 * deno run -A bench/console_bench.ts      # report with p50/p99
 * deno bench -A bench/console_bench.ts    # the same under Deno's bench harness
 * ```
 *
 * @module
 */
import { createApp } from "../app/main.ts";
import { loadAppEnv } from "../app/env.ts";
import { applySchema, applyUserListIndexes, listUsers, openLibsql } from "../d1.ts";

const USERS = 100_000;
const dir = new URL("./.data/", import.meta.url).pathname;
const file = `${dir}console_100k.db`;
const FIRST = [
  "ada",
  "grace",
  "alan",
  "linus",
  "barbara",
  "ken",
  "dennis",
  "margaret",
  "edsger",
  "donald",
  "john",
  "mary",
  "frances",
  "niklaus",
  "tim",
  "radia",
  "leslie",
  "shafi",
  "whitfield",
  "hedy",
  "katherine",
  "dorothy",
  "annie",
  "sophie",
  "guido",
  "bjarne",
  "james",
  "anders",
  "yukihiro",
  "rob",
  "brian",
  "larry",
  "richard",
  "robin",
  "ivan",
  "vint",
  "bob",
  "jean",
  "carol",
  "evelyn",
];
const LAST = [
  "lovelace",
  "hopper",
  "turing",
  "torvalds",
  "liskov",
  "thompson",
  "ritchie",
  "hamilton",
  "dijkstra",
  "knuth",
  "mccarthy",
  "wilkes",
  "allen",
  "wirth",
  "berners",
  "perlman",
  "lamport",
  "goldwasser",
  "diffie",
  "lamarr",
  "johnson",
  "vaughan",
  "easley",
  "wilson",
  "rossum",
  "stroustrup",
  "gosling",
  "hejlsberg",
  "matsumoto",
  "pike",
  "kernighan",
  "wall",
  "stallman",
  "milner",
  "sutherland",
  "cerf",
  "kahn",
  "sammet",
  "shaw",
  "boyd",
  "backus",
  "floyd",
  "hoare",
  "iverson",
  "kay",
  "lampson",
  "minsky",
  "naur",
  "newell",
  "perlis",
  "rabin",
  "reddy",
  "scott",
  "simon",
  "stearns",
  "tarjan",
  "ullman",
  "yao",
  "zuse",
  "noyce",
];
const cap = (s: string) => s[0].toUpperCase() + s.slice(1);

async function prepare(): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const db = openLibsql({ url: `file:${file}` });
  await applySchema(db);
  await applyUserListIndexes(db);
  const have = (await db.prepare("SELECT COUNT(*) AS n FROM users WHERE email LIKE '%@bench.test'")
    .first<{ n: number }>())?.n ?? 0;
  const now = Date.now();
  const started = performance.now();
  for (let i = have; i < USERS; i += 1000) {
    const n = Math.min(1000, USERS - i);
    const rows = Array.from({ length: n }, () => "(?, ?, NULL, 1, ?, ?, ?, ?, 0)").join(", ");
    const args: unknown[] = [];
    for (let k = i; k < i + n; k++) {
      const first = FIRST[k % FIRST.length];
      const last = LAST[Math.floor(k / FIRST.length) % LAST.length];
      args.push(
        crypto.randomUUID(),
        `${first}.${last}.${k}@bench.test`,
        crypto.randomUUID(),
        now - k * 1000,
        now,
        k % 5 === 0 ? null : `${cap(first)} ${cap(last)}`,
      );
    }
    await db.prepare(
      `INSERT OR IGNORE INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at, name, is_admin) VALUES ${rows}`,
    ).bind(...args).run();
    if ((i + n) % 20_000 === 0 || i + n === USERS) {
      console.error(
        `generating users: ${i + n}/${USERS} (${
          ((performance.now() - started) / 1000).toFixed(1)
        } s)`,
      );
    }
  }
  db.close();
}

await prepare();
const blobs = await Deno.makeTempDir({ prefix: "gatehouse-console-bench-" });
const app = await createApp(loadAppEnv({
  MODE: "development",
  DATABASE_URL: `file:${file}`,
  MAIL_BLOB_DIR: blobs,
  GATEHOUSE_ADMIN: "127.0.0.1:1",
}));
const origin = "http://127.0.0.1:8000";
const signedIn = await app.fetch(
  new Request(`${origin}/admin/api/auth/login`, {
    method: "POST",
    headers: { accept: "text/html", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: "owner@example.com", password: "owner-password" }),
  }),
);
const cookie = signedIn.headers.get("set-cookie")!.split(";")[0];
const db = openLibsql({ url: `file:${file}` });

/** One console page, read whole; fails loudly on anything but 200. */
async function page(path: string): Promise<void> {
  const res = await app.fetch(new Request(`${origin}${path}`, { headers: { cookie } }));
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.slice(0, 200)}`);
}

const deep = await listUsers(db, { limit: 50, search: "m" });
const cursor = deep.ok ? deep.next : null;
const SEARCHES: [string, string][] = [
  ["first page, no search", "/admin/users"],
  ["search: e-mail prefix, one match", "/admin/users?search=grace.hopper.4201"],
  ["search: name prefix", "/admin/users?search=Margaret%20Ham"],
  ["search: one letter", "/admin/users?search=m"],
  ["search: no match", "/admin/users?search=zzzz"],
  ["search: next page of one letter", `/admin/users?search=m&after=${cursor}`],
  ["administrators only", "/admin/users?admins=1"],
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measure(name: string, runs: number, op: () => Promise<unknown>): Promise<number> {
  await op();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await op();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const p99 = percentile(times, 99);
  console.log(
    `${name.padEnd(44)} ${String(runs).padStart(4)} runs  p50 ${
      percentile(times, 50).toFixed(2).padStart(7)
    } ms  p99 ${p99.toFixed(2).padStart(7)} ms`,
  );
  return p99;
}

if (import.meta.main) {
  const count = await db.prepare("SELECT COUNT(*) AS n FROM users").first<{ n: number }>();
  console.log(`libSQL file ${file}: ${count?.n} users\n\nwhole page (session, listUsers, render):`);
  let worst = 0;
  for (const [name, path] of SEARCHES) {
    worst = Math.max(
      worst,
      await measure(name, 200, () => page(path)),
    );
  }
  console.log("\nlistUsers alone:");
  await measure(
    "listUsers, e-mail prefix",
    200,
    () => listUsers(db, { search: "grace.hopper.4201", limit: 50 }),
  );
  await measure("listUsers, one letter", 200, () => listUsers(db, { search: "m", limit: 50 }));
  console.log(`\nworst p99 of a page: ${worst.toFixed(2)} ms`);
  db.close();
  await Deno.remove(blobs, { recursive: true });
} else {
  for (const [name, path] of SEARCHES) {
    Deno.bench({ name: `page: ${name}`, n: 100, warmup: 5, fn: async () => await page(path) });
  }
}
