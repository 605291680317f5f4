/**
 * The two databases the flow suite runs on: libSQL on a temp file, and Cloudflare's D1 through
 * Miniflare. `runSuite` registers one Deno test per backend, each running every case as a step.
 */
import { Miniflare } from "miniflare";
import { applySchema, type D1Database, type LibsqlDatabase, openLibsql } from "../../d1.ts";

/** What a case receives. */
export interface CaseContext {
  /** Backend name: `libsql` or `d1`. */
  backend: "libsql" | "d1";
  /** A database with the schema applied, shared by the cases (use distinct e-mails). */
  db: D1Database;
  /** A new, empty database (no schema). */
  fresh(): Promise<D1Database>;
}

/** One test case of the flow suite. */
export interface Case {
  name: string;
  fn(ctx: CaseContext): Promise<void>;
}

const EXTRA_D1 = Array.from({ length: 16 }, (_, i) => `DB${i + 1}`);

interface Backend {
  ctx: CaseContext;
  close(): Promise<void>;
}

async function libsqlBackend(): Promise<Backend> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-d1-" });
  const opened: LibsqlDatabase[] = [];
  let n = 0;
  const open = () => {
    const db = openLibsql({ url: `file:${dir}/db${n++}.db` });
    opened.push(db);
    return db;
  };
  const db = open();
  await applySchema(db);
  return {
    ctx: { backend: "libsql", db, fresh: () => Promise.resolve(open()) },
    async close() {
      for (const d of opened) d.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

async function d1Backend(): Promise<Backend> {
  const mf = new Miniflare({
    modules: true,
    script: "export default {fetch(){return new Response()}}",
    d1Databases: ["DB", ...EXTRA_D1],
  });
  const db: D1Database = await mf.getD1Database("DB");
  await applySchema(db);
  const spare = [...EXTRA_D1];
  return {
    ctx: {
      backend: "d1",
      db,
      async fresh() {
        const name = spare.shift();
        if (!name) throw new Error("out of spare D1 databases; add one to EXTRA_D1");
        const d1: D1Database = await mf.getD1Database(name);
        return d1;
      },
    },
    close: () => mf.dispose(),
  };
}

/**
 * Registers the suite on one backend. Miniflare runs workerd as a child process with sockets
 * that Deno's sanitizers would flag while it lives; it is disposed at the end of the test, so
 * the D1 variant turns the resource and op sanitizers off.
 */
export function runSuite(backend: "libsql" | "d1", cases: Case[]): void {
  Deno.test({
    name: `d1 flows on ${backend === "d1" ? "Cloudflare D1 (Miniflare)" : "libSQL (temp file)"}`,
    sanitizeResources: backend !== "d1",
    sanitizeOps: backend !== "d1",
    async fn(t) {
      const b = backend === "d1" ? await d1Backend() : await libsqlBackend();
      try {
        for (const c of cases) {
          await t.step(c.name, () => c.fn(b.ctx));
        }
      } finally {
        await b.close();
      }
    },
  });
}
