/**
 * Throttling of wrong credentials (API keys and the operator token), with its state in the
 * mail store's libSQL database so it holds across restarts and processes:
 *
 * - **Per client** (its address; an IPv6 client by its /64): the first 10 wrong credentials
 *   are answered as usual; each further one makes the client wait 1 s, then 2, 4, ... up to
 *   15 minutes, during which every credential it sends (right or wrong) gets 429 without being
 *   checked. Wrong API keys and wrong operator tokens count separately.
 * - **Per credential** (the key prefix `gh_live_XXXX` of an existing key, or "the operator
 *   token"): past 50 wrong tries from all clients together, the same backoff applies to that
 *   prefix — except for clients that used a key of that prefix successfully in the last 30
 *   days, so the owner's own clients keep working during a distributed attack.
 * - Failures are forgotten one hour after the last one; a block ends by itself. Nobody is ever
 *   locked out for good: the longest wait is 15 minutes after the last wrong try.
 *
 * A missing credential, or the right one, never counts as a failure.
 *
 * @module
 */
import type { MailDb } from "./db.ts";

/** Settings of the throttle; every number has a documented default. */
export interface AuthThrottleOptions {
  /** Wrong credentials one client may send before it backs off (default 10). */
  clientFreeFailures?: number;
  /** Wrong tries at one key prefix (or the operator token), all clients, before it backs off (default 50). */
  credentialFreeFailures?: number;
  /** Longest wait in seconds (default 900). */
  maxBackoffSeconds?: number;
  /** Failures are forgotten this many seconds after the last one (default 3600). */
  forgetAfterSeconds?: number;
  /** A client that used a credential within this many seconds is exempt from its credential backoff (default 30 days). */
  knownClientSeconds?: number;
}

/** Which credential a client is trying. */
export type CredentialKind = "key" | "operator";

/** Current waits, in whole seconds (0 = free to try). */
export interface ThrottleWait {
  /** The client's own wait. */
  client: number;
  /** The credential's (key prefix's or operator token's) wait. */
  credential: number;
}

const KNOWN_MEMO_MS = 3600_000;
const SWEEP_EVERY_MS = 600_000;

/**
 * The throttle over a server's database.
 *
 * @example
 * ```ts
 * import { createClient } from "@libsql/client";
 * import { MailDb } from "./db.ts";
 * import { AuthThrottle } from "./auth_throttle.ts";
 * const db = new MailDb(createClient({ url: ":memory:" }));
 * await db.migrate();
 * const throttle = new AuthThrottle(db, { clientFreeFailures: 1 });
 * await throttle.failed("key", "203.0.113.9", null);
 * console.log(await throttle.failed("key", "203.0.113.9", null)); // 1 (seconds to wait)
 * ```
 */
export class AuthThrottle {
  /** Wrong credentials per client before backoff. */
  readonly clientFree: number;
  /** Wrong tries per credential before backoff. */
  readonly credentialFree: number;
  /** Longest wait, milliseconds. */
  readonly maxMs: number;
  /** Forget failures after, milliseconds. */
  readonly forgetMs: number;
  /** Known-client window, milliseconds. */
  readonly knownMs: number;
  #db: MailDb;
  #recorded = new Map<string, number>();
  #lastSweep = 0;

  /** Creates the throttle (the tables come with `MailDb.migrate`). */
  constructor(db: MailDb, options: AuthThrottleOptions = {}) {
    this.#db = db;
    this.clientFree = options.clientFreeFailures ?? 10;
    this.credentialFree = options.credentialFreeFailures ?? 50;
    this.maxMs = (options.maxBackoffSeconds ?? 900) * 1000;
    this.forgetMs = (options.forgetAfterSeconds ?? 3600) * 1000;
    this.knownMs = (options.knownClientSeconds ?? 30 * 86400) * 1000;
  }

  /** How long `client`, and the credential `subject` (if any), must wait now. */
  async waits(kind: CredentialKind, client: string, subject: string | null): Promise<ThrottleWait> {
    const now = this.#db.now();
    const r = await this.#db.execute({
      sql: `SELECT scope, blocked_until FROM mail_auth_failures
            WHERE (scope = ? AND subject = ?) OR (scope = 'credential' AND subject = ?)`,
      args: [`${kind}-client`, client, subject ?? ""],
    });
    const wait: ThrottleWait = { client: 0, credential: 0 };
    for (const row of r.rows) {
      const seconds = Math.max(0, Math.ceil((Number(row.blocked_until) - now) / 1000));
      if (row.scope === "credential") wait.credential = seconds;
      else wait.client = seconds;
    }
    return wait;
  }

  /**
   * Records a wrong credential from `client` (and against `subject`, when it names an existing
   * key prefix or the operator token); returns the seconds the client or subject must now wait.
   */
  async failed(kind: CredentialKind, client: string, subject: string | null): Promise<number> {
    return await this.#db.write(async ({ tx, now }) => {
      let wait = await this.#count(tx, now, `${kind}-client`, client, this.clientFree);
      if (subject !== null) {
        wait = Math.max(
          wait,
          await this.#count(tx, now, "credential", subject, this.credentialFree),
        );
      }
      if (now - this.#lastSweep > SWEEP_EVERY_MS) {
        this.#lastSweep = now;
        await tx.execute({
          sql: "DELETE FROM mail_auth_failures WHERE last_failure_at < ? AND blocked_until < ?",
          args: [now - this.forgetMs, now],
        });
        await tx.execute({
          sql: "DELETE FROM mail_auth_known WHERE seen_at < ?",
          args: [now - this.knownMs],
        });
      }
      return Math.ceil(wait / 1000);
    });
  }

  async #count(
    tx: { execute: MailDb["execute"] },
    now: number,
    scope: string,
    subject: string,
    free: number,
  ): Promise<number> {
    const r = await tx.execute({
      sql:
        `INSERT INTO mail_auth_failures (scope, subject, failures, last_failure_at, blocked_until)
            VALUES (?, ?, 1, ?, 0)
            ON CONFLICT(scope, subject) DO UPDATE SET
              failures = CASE WHEN last_failure_at < ? THEN 1 ELSE failures + 1 END,
              last_failure_at = excluded.last_failure_at
            RETURNING failures`,
      args: [scope, subject, now, now - this.forgetMs],
    });
    const failures = Number(r.rows[0].failures);
    if (failures <= free) return 0;
    const wait = Math.min(this.maxMs, 1000 * 2 ** Math.min(failures - free - 1, 30));
    await tx.execute({
      sql: "UPDATE mail_auth_failures SET blocked_until = ? WHERE scope = ? AND subject = ?",
      args: [now + wait, scope, subject],
    });
    return wait;
  }

  /** True when `client` used `credential` successfully within the known-client window. */
  async known(credential: string, client: string): Promise<boolean> {
    const r = await this.#db.execute({
      sql: "SELECT seen_at FROM mail_auth_known WHERE credential = ? AND client = ?",
      args: [credential, client],
    });
    return r.rows.length > 0 && Number(r.rows[0].seen_at) >= this.#db.now() - this.knownMs;
  }

  /** Remembers that `client` used `credential` successfully (written at most hourly). */
  async succeeded(credential: string, client: string): Promise<void> {
    const now = this.#db.now();
    const memo = `${credential}\n${client}`;
    const last = this.#recorded.get(memo);
    if (last !== undefined && now - last < KNOWN_MEMO_MS) return;
    if (this.#recorded.size >= 10_000) this.#recorded.clear();
    this.#recorded.set(memo, now);
    await this.#db.write(({ tx }) =>
      tx.execute({
        sql: `INSERT INTO mail_auth_known (credential, client, seen_at) VALUES (?, ?, ?)
              ON CONFLICT(credential, client) DO UPDATE SET seen_at = excluded.seen_at`,
        args: [credential, client, now],
      })
    );
  }
}

/**
 * The throttling identity of a client address: an IPv4 address as it is, an IPv6 address by
 * its /64 (one host usually has a whole /64), an IPv4-mapped IPv6 address as IPv4.
 *
 * @example
 * ```ts
 * import { clientKey } from "./auth_throttle.ts";
 * console.log(clientKey("2001:db8:1:2:aaaa::1")); // "2001:db8:1:2::/64"
 * ```
 */
export function clientKey(address: string | undefined): string {
  if (!address) return "unknown";
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped) return mapped[1];
  if (!bare.includes(":")) return bare;
  const [head, tail = ""] = bare.split("::");
  const left = head ? head.split(":") : [];
  const right = bare.includes("::") && tail ? tail.split(":") : [];
  const groups = bare.includes("::")
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right]
    : left;
  return groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":") + "::/64";
}
