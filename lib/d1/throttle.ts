/**
 * Throttles of guessing, stored in the site's database (table `auth_throttle`, one row per
 * bucket): password sign-in per account and client, per account and per client; signup codes
 * per address; re-authentication per account. Each bucket lets a number of failures through,
 * then asks for a wait that doubles with every further failure, up to a cap, so an attacker
 * is slowed to a few tries an hour while the owner is never locked out for good:
 *
 * - a try is counted **before** the password or code is checked, in one atomic statement that
 *   refuses it when any of its buckets is waiting, so concurrent tries cannot pass a limit;
 * - a success clears the account's buckets (the client-wide one only forgets that try);
 * - a client that once signed in to an account is "known" to it and never waits on that
 *   account's shared bucket, only on its own, so strangers failing on the account do not
 *   keep its owner out; a reset clears every bucket of the account;
 * - counts restart after a day without a try, and rows are dropped then (known clients after
 *   90 days).
 *
 * @module
 */
import type { D1Database } from "./types.ts";
import { batch, first, run, stmt } from "./query.ts";
import { fail } from "./errors.ts";

/** The limits of every throttle (counts of failures, times in seconds). */
export const THROTTLE: {
  /** Failures let through per account and client before waits start. */
  readonly accountClient: number;
  /** Failures let through per account (all clients not known to it). */
  readonly account: number;
  /** Failures let through per client (all accounts). */
  readonly client: number;
  /** Wrong signup codes let through per address (all codes; each code has 5 tries). */
  readonly code: number;
  /** Wrong current passwords let through per account (password change, e-mail change, removal). */
  readonly reauth: number;
  /** The first wait, in seconds; each further failure doubles it. */
  readonly firstDelaySeconds: number;
  /** The longest wait, in seconds. */
  readonly maxDelaySeconds: number;
  /** Counts restart after this many seconds without a try. */
  readonly windowSeconds: number;
  /** A known client stays known this many seconds after its last sign-in. */
  readonly knownSeconds: number;
} = Object.freeze({
  accountClient: 5,
  account: 20,
  client: 100,
  code: 10,
  reauth: 5,
  firstDelaySeconds: 1,
  maxDelaySeconds: 900,
  windowSeconds: 86_400,
  knownSeconds: 90 * 86_400,
});

/**
 * What a bucket counts (`send`: the reset-link slot of an address; `factor`: second-factor
 * codes, with the limits of `sign-in`). @internal
 */
export type ThrottleKind = "sign-in" | "code" | "reauth" | "send" | "factor";

/** One counter: `account` is "" for a client-wide bucket, `client` "" for an account-wide one. */
export interface Bucket {
  kind: ThrottleKind;
  account: string;
  client: string;
  /** Failures let through before waits start. */
  free: number;
  /** Not waited on while this client is known to this account. */
  unlessKnown?: { account: string; client: string };
}

/** A piece of SQL with its bound values, in order. */
interface Sql {
  text: string;
  args: unknown[];
}

/** SQL from a template: a `Sql` piece is spliced in, any other value becomes a bound `?`. */
function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  let text = strings[0];
  const args: unknown[] = [];
  values.forEach((v, i) => {
    if (isSql(v)) {
      text += v.text;
      args.push(...v.args);
    } else {
      text += "?";
      args.push(v);
    }
    text += strings[i + 1];
  });
  return { text, args };
}

function isSql(v: unknown): v is Sql {
  return typeof v === "object" && v !== null && "text" in v && "args" in v;
}

function joined(parts: Sql[], separator: string): Sql {
  return { text: parts.map((p) => p.text).join(separator), args: parts.flatMap((p) => p.args) };
}

const is = (b: { account: string; client: string }, kind: ThrottleKind) =>
  sql`(kind = ${kind} AND account = ${b.account} AND client = ${b.client})`;

/** The buckets a try must not find waiting (a known client skips the shared one). */
function gate(buckets: Bucket[]): Sql {
  return joined(
    buckets.map((b) =>
      b.unlessKnown
        ? sql`(${is(b, b.kind)} AND NOT EXISTS (SELECT 1 FROM auth_throttle AS k WHERE ${
          is(b.unlessKnown, b.kind)
        } AND k.known = 1))`
        : is(b, b.kind)
    ),
    " OR ",
  );
}

/**
 * Counts one try in every bucket, unless one of them is waiting: then nothing is counted and
 * the try stops with `too_many_attempts` and the seconds to wait. One batch (one round trip,
 * one transaction); a refused try reads the wait with one more query. @internal
 */
export async function takeTry(db: D1Database, buckets: Bucket[], now: number): Promise<void> {
  const window = now - THROTTLE.windowSeconds * 1000;
  const failures = sql`(CASE WHEN updated_at < ${window} THEN 1 ELSE failures + 1 END)`;
  const free = sql`(CASE ${
    joined(buckets.map((b) => sql`WHEN ${is(b, b.kind)} THEN ${b.free}`), " ")
  } END)`;
  const delay =
    sql`min(${THROTTLE.maxDelaySeconds}, ${THROTTLE.firstDelaySeconds} * (1 << min(20, ${failures} - ${free})))`;
  const waiting = gate(buckets);
  const cleanup = sql`DELETE FROM auth_throttle WHERE updated_at < ${window}
    AND (known = 0 OR updated_at < ${now - THROTTLE.knownSeconds * 1000})`;
  const rows = sql`INSERT INTO auth_throttle
    (kind, account, client, failures, blocked_until, known, updated_at) VALUES ${
    joined(buckets.map((b) => sql`(${b.kind}, ${b.account}, ${b.client}, 0, 0, 0, ${now})`), ", ")
  } ON CONFLICT DO NOTHING`;
  // SQLite reads the whole WHERE, subquery included, before it changes any row: a try that
  // starts a wait in one bucket is still counted in the others.
  const count = sql`UPDATE auth_throttle SET
      failures = ${failures},
      blocked_until = CASE WHEN ${failures} < ${free} THEN 0 ELSE ${now} + 1000 * ${delay} END,
      updated_at = ${now}
    WHERE (${joined(buckets.map((b) => is(b, b.kind)), " OR ")})
      AND NOT EXISTS (SELECT 1 FROM auth_throttle WHERE blocked_until > ${now} AND (${waiting}))`;
  const [, , counted] = await batch(
    db,
    [cleanup, rows, count].map((q) => stmt(db, q.text, ...q.args)),
  );
  if (counted > 0) return;
  const until = sql`SELECT max(blocked_until) AS until FROM auth_throttle
    WHERE blocked_until > ${now} AND (${waiting})`;
  const row = await first<{ until: number | null }>(db, until.text, ...until.args);
  const ms = Number(row?.until ?? 0) - now;
  fail("too_many_attempts", Math.max(1, Math.ceil(ms / 1000)));
}

/**
 * After a success: the account's buckets start over (and the client becomes known to the
 * account); the client-wide bucket only forgets the try that succeeded. @internal
 */
export async function clearTries(
  db: D1Database,
  kind: ThrottleKind,
  account: string,
  client: string,
  now: number,
): Promise<void> {
  const statements = [
    sql`UPDATE auth_throttle SET failures = 0, blocked_until = 0, updated_at = ${now},
      known = CASE WHEN client = '' THEN known ELSE 1 END
      WHERE kind = ${kind} AND account = ${account} AND client IN (${client}, '')`,
  ];
  if (client) {
    statements.push(
      sql`UPDATE auth_throttle SET failures = max(0, failures - 1),
        blocked_until = CASE WHEN failures - 1 < ${THROTTLE.client} THEN 0 ELSE blocked_until END
        WHERE kind = ${kind} AND account = '' AND client = ${client}`,
    );
  }
  await batch(db, statements.map((q) => stmt(db, q.text, ...q.args)));
}

/** The buckets of a password sign-in of `account` (a canonical e-mail) from `client`. @internal */
export function signInBuckets(account: string, client: string): Bucket[] {
  if (!client) return [{ kind: "sign-in", account, client: "", free: THROTTLE.account }];
  return [
    { kind: "sign-in", account, client, free: THROTTLE.accountClient },
    { kind: "sign-in", account: "", client, free: THROTTLE.client },
    {
      kind: "sign-in",
      account,
      client: "",
      free: THROTTLE.account,
      unlessKnown: { account, client },
    },
  ];
}

/**
 * Takes the one e-mail per `seconds` that an address may be sent (reset links), for any
 * address, account or not: one write of the same row shape either way, so the work does not
 * tell whether the address has an account. Resolves to whether the e-mail is due. @internal
 */
export async function takeSendSlot(
  db: D1Database,
  account: string,
  seconds: number,
  now: number,
): Promise<boolean> {
  const changed = await run(
    db,
    `INSERT INTO auth_throttle (kind, account, client, failures, blocked_until, known, updated_at)
     VALUES ('send', ?, '', 0, ?, 0, ?)
     ON CONFLICT (kind, account, client) DO UPDATE SET
       blocked_until = excluded.blocked_until, updated_at = excluded.updated_at
     WHERE auth_throttle.blocked_until <= ?`,
    [account, now + seconds * 1000, now, now],
  );
  return changed === 1;
}

/** Gives back the slot of an e-mail that could not be sent. @internal */
export async function releaseSendSlot(db: D1Database, account: string): Promise<void> {
  await run(
    db,
    "UPDATE auth_throttle SET blocked_until = 0 WHERE kind = 'send' AND account = ? AND client = ''",
    [account],
  ).catch(() => 0);
}

/** A reset proved the inbox: every bucket of the account starts over. @internal */
export async function resetTries(db: D1Database, account: string, now: number): Promise<void> {
  await run(
    db,
    `UPDATE auth_throttle SET failures = 0, blocked_until = 0, updated_at = ?
     WHERE account = ?`,
    [now, account],
  );
}

/**
 * The client key of a sign-in: what the site passes (an IP address, a device id), trimmed and
 * lowercased; an IPv6 address stands for its /64 network, since one host usually holds a
 * whole /64; an IPv4-mapped IPv6 address is that IPv4 address. @internal
 */
export function clientKey(raw: string): string {
  const s = raw.trim().toLowerCase();
  let v6 = /^\[?([0-9a-f:.]+)(?:%[^\]]*)?\]?$/.exec(s)?.[1];
  if (!v6 || !v6.includes(":")) return s;
  const quad = /:(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v6);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    if ([a, b, c, d].some((n) => n > 255)) return s;
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
    v6 = `${v6.slice(0, quad.index)}:${hex(a, b)}:${hex(c, d)}`;
  }
  const halves = v6.split("::");
  if (halves.length > 2) return s;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const fill = 8 - head.length - tail.length;
  if (halves.length === 2 ? fill < 1 : fill !== 0) return s;
  const all = [...head, ...Array(fill).fill("0"), ...tail].map((g) => g.replace(/^0+(?=.)/, ""));
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return s;
  if (all.slice(0, 5).every((g) => g === "0") && all[5] === "ffff") {
    const n = parseInt(all[6], 16) * 65_536 + parseInt(all[7], 16);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
  }
  return `${all.slice(0, 4).join(":")}::/64`;
}
