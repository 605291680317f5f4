/** Shared helpers of the d1 tests: a capturing e-mail sender, unique addresses, constants. */
import type { D1Database, D1PreparedStatement, EmailMessage } from "../../d1.ts";

/** The TOKEN_SECRET of the tests. */
export const SECRET = "test token secret, long and random enough";
/** Low PBKDF2 iterations for speed (one case uses the default). */
export const ITER = 1000;
/** A password that passes the policy. */
export const PASSWORD = "correct horse battery staple";

let counter = 0;
/** A fresh address for each call. */
export function newEmail(tag = "user"): string {
  return `${tag}-${++counter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

/** A sender that keeps every message. */
export function outbox(): {
  send: (m: EmailMessage) => Promise<void>;
  mails: EmailMessage[];
  to: (addr: string) => EmailMessage[];
} {
  const mails: EmailMessage[] = [];
  return {
    mails,
    send: (m) => {
      mails.push(m);
      return Promise.resolve();
    },
    to: (addr) => mails.filter((m) => m.to === addr),
  };
}

/** The 6-digit code in a message. */
export function codeIn(mail: EmailMessage | undefined): string {
  const m = mail?.text.match(/\b(\d{6})\b/);
  if (!m) throw new Error("no code in the message");
  return m[1];
}

/** The `token` query parameter of the first link in a message. */
export function tokenIn(mail: EmailMessage | undefined): string {
  const m = mail?.text.match(/https?:\/\/\S+/);
  if (!m) throw new Error("no link in the message");
  const token = new URL(m[0]).searchParams.get("token");
  if (!token) throw new Error("no token in the link");
  return token;
}

/** A sender that always fails. */
export const failingSender = (): Promise<void> => Promise.reject(new Error("smtp down"));

/** A database object whose every call fails like a dead connection. */
export const brokenDb = {
  prepare(): never {
    throw new Error("connection lost");
  },
  batch(): Promise<never> {
    return Promise.reject(new Error("connection lost"));
  },
};

/**
 * The real binding, logging every database call that runs: each statement's SQL (not its
 * values), a batch as one entry with its statements' SQL in order; `changes` gets the rows each
 * write changed (for a statement with RETURNING, the rows it returned: local libSQL reports no
 * changes for those).
 */
export function counting(db: D1Database): { db: D1Database; log: string[]; changes: number[] } {
  const log: string[] = [];
  const changes: number[] = [];
  const inner = new WeakMap<D1PreparedStatement, { sql: string; s: D1PreparedStatement }>();
  const changed = <R extends { meta?: { changes?: number }; results?: unknown[] }>(
    sql: string,
    r: R,
  ): R => {
    const returned = /\bRETURNING\b/i.test(sql) ? r.results?.length ?? 0 : 0;
    changes.push(Math.max(Number(r.meta?.changes ?? 0), returned));
    return r;
  };
  const wrap = (sql: string, s: D1PreparedStatement): D1PreparedStatement => {
    const w: D1PreparedStatement = {
      bind: (...values) => wrap(sql, s.bind(...values)),
      first: <T>() => (log.push(`first ${sql}`), s.first<T>()),
      all: <T>() => (log.push(`all ${sql}`), s.all<T>()),
      run: <T>() => (log.push(`run ${sql}`), s.run<T>().then((r) => changed(sql, r))),
    };
    inner.set(w, { sql, s });
    return w;
  };
  return {
    log,
    changes,
    db: {
      prepare: (sql) => wrap(sql.replace(/\s+/g, " "), db.prepare(sql)),
      batch: async <T>(statements: D1PreparedStatement[]) => {
        const seen = statements.map((s) => inner.get(s));
        log.push(`batch ${statements.length}: ${seen.map((x) => x?.sql ?? "?").join(" ; ")}`);
        const results = await db.batch<T>(statements.map((s, i) => seen[i]?.s ?? s));
        results.forEach((r, i) => changed(seen[i]?.sql ?? "", r));
        return results;
      },
    },
  };
}

/** Counts the Web Crypto calls made while `fn` runs. */
export async function cryptoCalls(fn: () => Promise<unknown>): Promise<Record<string, number>> {
  const subtle = crypto.subtle as unknown as Record<string, (...a: unknown[]) => unknown>;
  const names = ["sign", "verify", "importKey", "digest", "deriveBits", "deriveKey"];
  const counts: Record<string, number> = {};
  const saved = names.map((n) => [n, subtle[n], Object.hasOwn(subtle, n)] as const);
  for (const [n, original] of saved) {
    counts[n] = 0;
    subtle[n] = function (this: unknown, ...args: unknown[]) {
      counts[n]++;
      return original.apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    for (const [n, original, own] of saved) {
      if (own) subtle[n] = original;
      else delete subtle[n];
    }
  }
  return counts;
}
