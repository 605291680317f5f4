/**
 * How long the flows that e-mail only for one kind of address take to answer, for a known and
 * an unknown address, with a slow mail sender (an HTTP mail API: 40 ms, and 400 ms): the
 * answer's time must not depend on the sender, or it tells whether the account exists.
 *
 * - `requestPasswordReset`: a verified account's address (a link is sent) / an unknown one;
 * - `signup`: a verified account's address (a notice is sent) / a new one (a code is sent);
 * - `requestEmailChange`: to an address that a verified account has (nothing is sent) / a free
 *   one (a link is sent).
 *
 * Each case runs `--runs` times (default 200) on a libSQL file, alternating the known and the
 * unknown address (so the load of the machine weighs on both alike), the clock moved a
 * minute on each run so the one-mail-a-minute throttle never holds a mail back. Passwords are
 * hashed at 1,000 PBKDF2 iterations: the figures are the flow and the sender, not the hash.
 * Without `--wait-until` the flows get no `waitUntil` (the default a site gets); with it, a
 * `waitUntil` that collects the deliveries. Prints median and p95 in milliseconds, the median
 * of the paired differences (each run's unknown-address time minus the known one's of the same
 * run: the load of the moment cancels out), and checks that every mail was sent.
 *
 * ```sh
 * deno run -A --config tests/deno.json bench/auth/reset_timing.ts [--runs 200] [--wait-until] [--only signup]
 * ```
 *
 * @module
 */
import {
  applySchema,
  type D1Database,
  type EmailMessage,
  openLibsql,
  requestEmailChange,
  requestPasswordReset,
  signup,
  verifyOtp,
} from "../../d1.ts";

const SECRET = "bench token secret";
const PASSWORD = "correct horse battery staple";
const ITER = 1000;
const APP = "https://site.example";
const MINUTE = 61_000;

const args = Deno.args;
const runs = Number(args[args.indexOf("--runs") + 1]) || 200;
const useWaitUntil = args.includes("--wait-until");
const only = args.includes("--only") ? args[args.indexOf("--only") + 1] : null;

let counter = 0;
const fresh = (tag: string) => `${tag}-${++counter}-${crypto.randomUUID().slice(0, 8)}@bench.test`;

/** A verified account made through the flows; resolves to its id and address. */
async function verified(db: D1Database, now: number): Promise<{ id: string; email: string }> {
  const email = fresh("known");
  const mails: EmailMessage[] = [];
  const s = await signup(db, {
    email,
    password: PASSWORD,
    secret: SECRET,
    sendEmail: (m) => void mails.push(m),
    iterations: ITER,
    now,
  });
  const code = mails[0]?.text.match(/\b(\d{6})\b/)?.[1];
  if (!s.ok || !code) throw new Error("signup failed");
  const v = await verifyOtp(db, { email, code, attempt: s.attempt, secret: SECRET, now });
  if (!v.ok) throw new Error("verify failed");
  return { id: v.userId, email };
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

interface Row {
  flow: string;
  sender: number;
  address: string;
  median: number;
  p95: number;
  /** Median over the runs of this case's time minus the first case's in the same run. */
  paired: number | null;
  sent: number;
}

type Run = (
  send: (m: EmailMessage) => Promise<void>,
  extra: Record<string, unknown>,
) => Promise<unknown>;

/**
 * Runs the two cases of a flow alternately (known, unknown, unknown, known, ...), so that the
 * machine's load weighs on both alike; resolves to a row per case.
 */
async function measure(
  flow: string,
  sender: number,
  cases: { address: string; run: Run; mails: number }[],
): Promise<Row[]> {
  if (only && only !== flow) return [];
  const state = cases.map(() => ({ sent: 0, times: [] as number[] }));
  const pending: Promise<unknown>[] = [];
  const extra: Record<string, unknown> = useWaitUntil
    ? { waitUntil: (p: Promise<unknown>) => void pending.push(p) }
    : {};
  for (let i = 0; i < runs; i++) {
    for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
      const send = (_m: EmailMessage) =>
        new Promise<void>((resolve) =>
          setTimeout(() => {
            state[k].sent++;
            resolve();
          }, sender)
        );
      const t0 = performance.now();
      await cases[k].run(send, extra);
      state[k].times.push(performance.now() - t0);
    }
  }
  await Promise.all(pending);
  // deliveries not handed to waitUntil finish on their own: wait for the last ones
  const deadline = Date.now() + sender + 5000;
  while (cases.some((c, k) => state[k].sent < c.mails) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return cases.map((c, k) => {
    const diffs = k === 0
      ? null
      : state[k].times.map((t, i) => t - state[0].times[i]).sort((a, b) => a - b);
    const t = [...state[k].times].sort((a, b) => a - b);
    return {
      flow,
      sender,
      address: c.address,
      median: quantile(t, 0.5),
      p95: quantile(t, 0.95),
      paired: diffs && quantile(diffs, 0.5),
      sent: state[k].sent,
    };
  });
}

const dir = await Deno.makeTempDir({ prefix: "gatehouse-reset-timing-" });
const db = openLibsql(`file:${dir}/bench.db`);
await applySchema(db);
let now = Date.now();
const tick = () => (now += MINUTE);
const rows: Row[] = [];
try {
  const known = await verified(db, now);
  const holder = await verified(db, now);
  const reset = (email: () => string): Run => (sendEmail, extra) =>
    requestPasswordReset(db, {
      email: email(),
      secret: SECRET,
      sendEmail,
      appUrl: APP,
      now: tick(),
      ...extra,
    });
  const up = (email: () => string): Run => (sendEmail, extra) =>
    signup(db, {
      email: email(),
      password: PASSWORD,
      secret: SECRET,
      sendEmail,
      iterations: ITER,
      now: tick(),
      ...extra,
    });
  const change = (newEmail: () => string): Run => (sendEmail, extra) =>
    requestEmailChange(db, {
      userId: known.id,
      newEmail: newEmail(),
      password: PASSWORD,
      secret: SECRET,
      sendEmail,
      appUrl: APP,
      iterations: ITER,
      now: tick(),
      ...extra,
    });
  for (const sender of [40, 400]) {
    rows.push(
      ...await measure("requestPasswordReset", sender, [
        { address: "known", mails: runs, run: reset(() => known.email) },
        { address: "unknown", mails: 0, run: reset(() => fresh("nobody")) },
      ]),
      ...await measure("signup", sender, [
        { address: "known", mails: runs, run: up(() => known.email) },
        { address: "unknown", mails: runs, run: up(() => fresh("new")) },
      ]),
      ...await measure("requestEmailChange", sender, [
        { address: "known", mails: 0, run: change(() => holder.email) },
        { address: "unknown", mails: runs, run: change(() => fresh("free")) },
      ]),
    );
  }
} finally {
  db.close?.();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}

console.log(
  `${runs} runs per case, ${
    useWaitUntil ? "with" : "without"
  } waitUntil, Deno ${Deno.version.deno}`,
);
console.log("| flow | sender | address | median ms | p95 ms | paired difference ms | mails sent |");
console.log("| --- | ---: | --- | ---: | ---: | ---: | ---: |");
for (const r of rows) {
  const [median, p95] = [r.median.toFixed(1), r.p95.toFixed(1)];
  const paired = r.paired === null ? "" : `${r.paired >= 0 ? "+" : ""}${r.paired.toFixed(2)}`;
  console.log(
    `| ${r.flow} | ${r.sender} ms | ${r.address} | ${median} | ${p95} | ${paired} | ${r.sent} |`,
  );
}
