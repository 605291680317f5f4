/**
 * A small remote libSQL server for the tests: the Hrana protocol, version 2 over HTTP with JSON
 * (`POST <db>/v2/pipeline`), the one `@libsql/client` speaks to `http(s)://` and `libsql://`
 * URLs, over SQLite files through `node:sqlite`. It requires `Authorization: Bearer <token>`.
 * It stands in for `sqld` (not installed here) so the adapter's remote path, auth token
 * included, runs for real over loopback HTTP. Each path prefix (`/a/`, `/b/`) is its own
 * database.
 */
import { DatabaseSync } from "node:sqlite";

type HValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

interface HStmt {
  sql?: string;
  sql_id?: number;
  args?: HValue[];
  named_args?: { name: string; value: HValue }[];
  want_rows?: boolean;
}

type HCond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: HCond }
  | { type: "and" | "or"; conds: HCond[] }
  | { type: "is_autocommit" };

function decode(v: HValue): unknown {
  switch (v.type) {
    case "null":
      return null;
    case "integer":
      return BigInt(v.value);
    case "float":
      return v.value;
    case "text":
      return v.value;
    case "blob":
      return Uint8Array.from(atob(v.base64), (c) => c.charCodeAt(0));
  }
}

function encode(v: unknown): HValue {
  if (v === null || v === undefined) return { type: "null" };
  if (typeof v === "bigint") return { type: "integer", value: String(v) };
  if (typeof v === "number") {
    return Number.isInteger(v)
      ? { type: "integer", value: String(v) }
      : { type: "float", value: v };
  }
  if (typeof v === "string") return { type: "text", value: v };
  if (v instanceof Uint8Array) return { type: "blob", base64: btoa(String.fromCharCode(...v)) };
  return { type: "text", value: String(v) };
}

class Database {
  readonly db: DatabaseSync;
  readonly sqls = new Map<number, string>();
  constructor(path: string) {
    this.db = new DatabaseSync(path);
    this.db.exec("PRAGMA foreign_keys = ON");
  }

  execute(s: HStmt) {
    const sql = s.sql ?? this.sqls.get(s.sql_id ?? -1);
    if (sql === undefined) throw new Error("SQL_NOT_FOUND: no such sql_id");
    const stmt = this.db.prepare(sql);
    stmt.setReadBigInts(true);
    const args = (s.args ?? []).map(decode) as never[];
    const before = this.totalChanges();
    const cols = stmt.columns().map((c) => ({ name: c.name, decltype: c.type ?? null }));
    let rows: unknown[][] = [];
    let lastId: unknown = null;
    if (cols.length > 0) {
      rows = (stmt.all(...args) as Record<string, unknown>[]).map((r) => Object.values(r));
    } else {
      lastId = stmt.run(...args).lastInsertRowid;
    }
    return {
      cols,
      rows: rows.map((r) => r.map(encode)),
      affected_row_count: this.totalChanges() - before,
      last_insert_rowid: lastId === null ? null : String(lastId),
    };
  }

  totalChanges(): number {
    return Number((this.db.prepare("SELECT total_changes() AS n").get() as { n: number }).n);
  }
}

function failure(e: unknown) {
  const message = e instanceof Error ? e.message : String(e);
  const code = /UNIQUE|constraint/i.test(message) ? "SQLITE_CONSTRAINT" : "SQLITE_ERROR";
  return { message, code };
}

/** A running server: `url(name)` is the URL of database `name`. */
export interface HranaServer {
  url(name: string): string;
  /** Pipeline requests served, and refused for a wrong or missing token. */
  stats: { served: number; refused: number };
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 (ephemeral port); databases live in `dir`. */
export function startHranaServer(dir: string, token: string): HranaServer {
  const dbs = new Map<string, Database>();
  const stats = { served: 0, refused: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const m = url.pathname.match(/^\/([a-z0-9_-]+)\/v2(\/pipeline)?$/);
    if (!m) return new Response("not found", { status: 404 });
    if (req.headers.get("authorization") !== `Bearer ${token}`) {
      await req.body?.cancel();
      stats.refused++;
      return new Response("Unauthorized", { status: 401 });
    }
    if (req.method === "GET") return new Response("ok");
    let db = dbs.get(m[1]);
    if (!db) {
      db = new Database(`${dir}/${m[1]}.db`);
      dbs.set(m[1], db);
    }
    const body = await req.json() as { baton?: string | null; requests: { type: string }[] };
    stats.served++;
    let closed = false;
    const results = body.requests.map((r) => {
      try {
        return { type: "ok", response: handle(db!, r as never, () => (closed = true)) };
      } catch (e) {
        return { type: "error", error: failure(e) };
      }
    });
    return Response.json({ baton: closed ? null : crypto.randomUUID(), base_url: null, results });
  });
  return {
    url: (name) => `http://127.0.0.1:${server.addr.port}/${name}/`,
    stats,
    async close() {
      await server.shutdown();
      for (const d of dbs.values()) d.db.close();
    },
  };
}

function handle(
  db: Database,
  r: {
    type: string;
    stmt?: HStmt;
    batch?: { steps: { condition?: HCond; stmt: HStmt }[] };
    sql_id?: number;
    sql?: string;
  },
  close: () => void,
): unknown {
  switch (r.type) {
    case "execute":
      return { type: "execute", result: db.execute(r.stmt!) };
    case "batch": {
      const stepResults: unknown[] = [];
      const stepErrors: unknown[] = [];
      const holds = (c: HCond): boolean => {
        switch (c.type) {
          case "ok":
            return stepResults[c.step] != null;
          case "error":
            return stepErrors[c.step] != null;
          case "not":
            return !holds(c.cond);
          case "and":
            return c.conds.every(holds);
          case "or":
            return c.conds.some(holds);
          case "is_autocommit":
            return !db.db.isTransaction;
        }
      };
      for (const step of r.batch!.steps) {
        if (step.condition && !holds(step.condition)) {
          stepResults.push(null);
          stepErrors.push(null);
          continue;
        }
        try {
          stepResults.push(db.execute(step.stmt));
          stepErrors.push(null);
        } catch (e) {
          stepResults.push(null);
          stepErrors.push(failure(e));
        }
      }
      return { type: "batch", result: { step_results: stepResults, step_errors: stepErrors } };
    }
    case "store_sql":
      db.sqls.set(r.sql_id!, r.sql!);
      return { type: "store_sql" };
    case "close_sql":
      db.sqls.delete(r.sql_id!);
      return { type: "close_sql" };
    case "sequence":
      db.db.exec(r.sql ?? db.sqls.get(r.sql_id ?? -1) ?? "");
      return { type: "sequence" };
    case "get_autocommit":
      return { type: "get_autocommit", is_autocommit: !db.db.isTransaction };
    case "close":
      close();
      return { type: "close" };
    default:
      throw new Error(`unsupported request ${r.type}`);
  }
}
