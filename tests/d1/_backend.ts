/**
 * The databases the flow suite runs on: libSQL on a temp file, Cloudflare's D1 through
 * Miniflare, and a remote libSQL server (Hrana over HTTP with an auth token, see
 * `_hrana_server.ts`). `runSuite` registers one Deno test per backend, each running every case
 * as a step.
 */
import { Miniflare } from "miniflare";
import { applySchema, type D1Database, type LibsqlDatabase, openLibsql } from "../../d1.ts";
import { startHranaServer } from "./_hrana_server.ts";

/** What a case receives. */
export interface CaseContext {
  /** Backend name. */
  backend: BackendName;
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

const EXTRA_D1 = Array.from({ length: 32 }, (_, i) => `DB${i + 1}`);

type BackendName = "libsql" | "d1" | "remote";

interface Backend {
  name: BackendName;
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
    name: "libsql",
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
    name: "d1",
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

async function remoteBackend(): Promise<Backend> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-d1-remote-" });
  const token = `token-${crypto.randomUUID()}`;
  const server = startHranaServer(dir, token);
  const opened: LibsqlDatabase[] = [];
  let n = 0;
  const open = () => {
    const db = openLibsql({ url: server.url(`db${n++}`), authToken: token });
    opened.push(db);
    return db;
  };
  const db = open();
  await applySchema(db);
  return {
    name: "remote",
    ctx: { backend: "remote", db, fresh: () => Promise.resolve(open()) },
    async close() {
      for (const d of opened) d.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

const LABELS: Record<BackendName, string> = {
  libsql: "libSQL (temp file)",
  d1: "Cloudflare D1 (Miniflare)",
  remote: "a remote libSQL server over HTTP with an auth token",
};

/**
 * Registers the suite on one backend. Miniflare runs workerd as a child process with sockets
 * that Deno's sanitizers would flag while it lives; it is disposed at the end of the test, so
 * the D1 variant turns the resource and op sanitizers off.
 */
export function runSuite(backend: BackendName, cases: Case[]): void {
  Deno.test({
    name: `d1 flows on ${LABELS[backend]}`,
    sanitizeResources: backend !== "d1",
    sanitizeOps: backend !== "d1",
    async fn(t) {
      const b = backend === "d1"
        ? await d1Backend()
        : backend === "remote"
        ? await remoteBackend()
        : await libsqlBackend();
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
