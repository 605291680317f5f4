/**
 * Database flow throughput on a libSQL file holding 100,000 users: signup + verify, and login,
 * with p50/p99 latencies and operations per second.
 *
 * The database is generated once (progress on stderr) and cached as
 * `bench/.data/d1_100k.db`; users made by the benchmark are removed at the end. Each flow
 * runs sequentially, at the core's default PBKDF2 cost (600,000 iterations, what a site
 * pays) and at 1,000 iterations (what the database and flow code cost on top).
 *
 * ```sh
 * deno run -A bench/d1_bench.ts            # report with p50/p99
 * deno bench -A bench/d1_bench.ts          # the same flows under Deno's bench harness
 * ```
 *
 * @module
 */
import { hashPassword } from "../mod.ts";
import {
  applySchema,
  type EmailMessage,
  type LibsqlDatabase,
  login,
  openLibsql,
  signup,
  verifyOtp,
} from "../d1.ts";

const USERS = 100_000;
const LOW_USERS = 1000;
const PASSWORD = "existing user password";
const SECRET = "bench token secret";
const dir = new URL("./.data/", import.meta.url).pathname;
const file = `${dir}d1_100k.db`;

async function prepare(): Promise<LibsqlDatabase> {
  await Deno.mkdir(dir, { recursive: true });
  const db = openLibsql({ url: `file:${file}` });
  await applySchema(db);
  const have = (await db.prepare("SELECT COUNT(*) AS n FROM users WHERE email LIKE 'u%@bench.test'")
    .first<{ n: number }>())?.n ?? 0;
  if (have < USERS) await generate(db, have);
  // A thousand more at 1,000 iterations, for the login figure without the PBKDF2 cost.
  const low = await hashPassword(PASSWORD, { iterations: 1000 });
  const now = Date.now();
  const rows = Array.from({ length: LOW_USERS }, () => "(?, ?, ?, 1, ?, ?, ?)").join(", ");
  await db.prepare(
    `INSERT OR IGNORE INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at) VALUES ${rows}`,
  ).bind(
    ...Array.from({ length: LOW_USERS }, (_, k) => [
      crypto.randomUUID(),
      `low${k}@bench.test`,
      low,
      crypto.randomUUID(),
      now,
      now,
    ]).flat(),
  ).run();
  return db;
}

async function generate(db: LibsqlDatabase, have: number): Promise<void> {
  // One real hash at the default cost for every row: logins pay the full PBKDF2 price.
  const hash = await hashPassword(PASSWORD);
  const now = Date.now();
  const started = performance.now();
  for (let i = have; i < USERS; i += 1000) {
    const n = Math.min(1000, USERS - i);
    const rows = Array.from({ length: n }, () => "(?, ?, ?, 1, ?, ?, ?)").join(", ");
    const args: unknown[] = [];
    for (let k = i; k < i + n; k++) {
      args.push(crypto.randomUUID(), `u${k}@bench.test`, hash, crypto.randomUUID(), now, now);
    }
    await db.batch([
      db.prepare(
        `INSERT OR IGNORE INTO users (id, email, password_hash, email_verified, stamp, created_at, updated_at) VALUES ${rows}`,
      ).bind(...args),
    ]);
    if ((i + n) % 10_000 === 0 || i + n === USERS) {
      const s = ((performance.now() - started) / 1000).toFixed(1);
      console.error(`generating users: ${i + n}/${USERS} (${s} s)`);
    }
  }
}

const db = await prepare();
let counter = 0;

/** One signup followed by the verification of the e-mailed code. */
async function signupAndVerify(iterations?: number): Promise<void> {
  let mail: EmailMessage | undefined;
  const email = `bench-new-${Date.now()}-${counter++}@bench.test`;
  const s = await signup(db, {
    email,
    password: "a new user's passphrase",
    secret: SECRET,
    sendEmail: (m) => void (mail = m),
    iterations,
  });
  if (!s.ok || !mail) throw new Error(`signup failed: ${JSON.stringify(s)}`);
  const code = mail.text.match(/\b(\d{6})\b/)![1];
  const v = await verifyOtp(db, { email, code, attempt: s.attempt, secret: SECRET });
  if (!v.ok) throw new Error(`verify failed: ${v.error}`);
}

/** One login of a random existing user (stored at 600,000 iterations, or at 1,000). */
async function loginExisting(iterations?: number): Promise<void> {
  const email = iterations === 1000
    ? `low${Math.floor(Math.random() * LOW_USERS)}@bench.test`
    : `u${Math.floor(Math.random() * USERS)}@bench.test`;
  const r = await login(db, { email, password: PASSWORD, iterations });
  if (!r.ok) throw new Error(`login failed: ${r.error}`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measure(name: string, runs: number, op: () => Promise<void>): Promise<void> {
  await op(); // warm-up
  const times: number[] = [];
  const started = performance.now();
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await op();
    times.push(performance.now() - t);
  }
  const total = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  console.log(
    `${name.padEnd(40)} ${String(runs).padStart(5)} runs  ${
      (runs / total).toFixed(1).padStart(8)
    } /s` +
      `  p50 ${percentile(times, 50).toFixed(2).padStart(8)} ms  p99 ${
        percentile(times, 99).toFixed(2).padStart(8)
      } ms`,
  );
}

async function cleanup(): Promise<void> {
  await db.prepare("DELETE FROM otp_codes WHERE email LIKE 'bench-new-%'").run();
  await db.prepare("DELETE FROM users WHERE email LIKE 'bench-new-%'").run();
}

if (import.meta.main) {
  const count = await db.prepare("SELECT COUNT(*) AS n FROM users").first<{ n: number }>();
  console.log(`libSQL file ${file}: ${count?.n} users\n`);
  await measure("signup+verify (600,000 iterations)", 30, () => signupAndVerify());
  await measure("login (600,000 iterations)", 30, () => loginExisting());
  await measure("signup+verify (1,000 iterations)", 300, () => signupAndVerify(1000));
  await measure("login (1,000 iterations)", 300, () => loginExisting(1000));
  await cleanup();
  db.close();
} else {
  Deno.bench({
    name: "signup+verify (600,000 iterations)",
    n: 10,
    warmup: 1,
    fn: async () => await signupAndVerify(),
  });
  Deno.bench({
    name: "login (600,000 iterations)",
    n: 10,
    warmup: 1,
    fn: async () => await loginExisting(),
  });
  Deno.bench({
    name: "signup+verify (1,000 iterations)",
    n: 100,
    warmup: 5,
    fn: async () => await signupAndVerify(1000),
  });
  Deno.bench({
    name: "login (1,000 iterations)",
    n: 100,
    warmup: 5,
    fn: async () => await loginExisting(1000),
  });
  Deno.bench({ name: "cleanup", n: 1, warmup: 0, fn: async () => await cleanup() });
}
