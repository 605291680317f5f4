import assert from "node:assert/strict";
import { applySchema, login, openLibsql, signup, verifyOtp } from "../../d1.ts";
import { ITER, PASSWORD, SECRET } from "./_helpers.ts";
import { startHranaServer } from "./_hrana_server.ts";
import { holdSqliteWriteLock } from "../server/fixtures/sqlite_lock.ts";

Deno.test("libSQL adapter: :memory:, rows as objects, change counts, batch rolls back", async () => {
  const db = openLibsql(":memory:");
  try {
    await applySchema(db);
    await db.prepare("CREATE TABLE t (a TEXT UNIQUE, b INTEGER)").run();
    const r = await db.prepare("INSERT INTO t VALUES (?, ?), (?, ?)").bind("x", 1, "y", null).run();
    assert.equal(r.meta.changes, 2);
    assert.equal(r.success, true);
    assert.deepEqual(
      await db.prepare("SELECT a, b FROM t ORDER BY a").all().then((x) => x.results),
      [
        { a: "x", b: 1 },
        { a: "y", b: null },
      ],
    );
    assert.deepEqual(await db.prepare("SELECT a FROM t WHERE a = ?").bind("x").first(), { a: "x" });
    assert.equal(await db.prepare("SELECT a FROM t WHERE a = ?").bind("none").first(), null);
    await assert.rejects(
      db.batch([
        db.prepare("INSERT INTO t VALUES ('z', 3)"),
        db.prepare("INSERT INTO t VALUES ('x', 4)"),
      ]),
      /UNIQUE/,
    );
    assert.equal(
      await db.prepare("SELECT a FROM t WHERE a = 'z'").first(),
      null,
      "batch rolled back",
    );
    assert.throws(() => db.prepare("SELECT ?").bind(undefined), /undefined/);
    // :memory: keeps one database across calls and batches.
    const s = await signup(db, {
      email: "m@example.com",
      password: PASSWORD,
      secret: SECRET,
      sendEmail: () => {},
      iterations: ITER,
    });
    assert.equal(s.ok, true);
  } finally {
    db.close();
  }
});

Deno.test("libSQL adapter: a file: database waits for another process's write lock (every pooled connection), busyTimeoutMs bounds it", async () => {
  const dir = await Deno.makeTempDir();
  const db = openLibsql(`file:${dir}/site.db`);
  const impatient = openLibsql({ url: `file:${dir}/site.db`, busyTimeoutMs: 100 });
  try {
    await db.prepare("CREATE TABLE t (a INTEGER)").run();
    // concurrent reads open more pooled connections; the next statements take the last opened
    await Promise.all(Array.from({ length: 6 }, () => db.prepare("SELECT 1").all()));
    await impatient.prepare("SELECT 1").all();
    const { released } = await holdSqliteWriteLock(`${dir}/site.db`, 2);
    await assert.rejects(impatient.prepare("INSERT INTO t VALUES (0)").run(), /SQLITE_BUSY/);
    for (let i = 0; i < 3; i++) await db.prepare("INSERT INTO t VALUES (?)").bind(i).run();
    await released;
    assert.deepEqual(await db.prepare("SELECT count(*) AS n FROM t").first(), { n: 3 });
  } finally {
    db.close();
    impatient.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("libSQL adapter: an unreachable remote server gives db_error, never a throw", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const db = openLibsql({ url: `http://127.0.0.1:${port}`, authToken: "secret-token" });
  try {
    const r = await login(db, { email: "a@example.com", password: PASSWORD, iterations: ITER });
    assert.deepEqual(r, { ok: false, error: "db_error" });
    assert.ok(!JSON.stringify(r).includes("secret-token"));
  } finally {
    db.close();
  }
});

Deno.test("libSQL adapter: a remote server over HTTP with an auth token; a wrong token is db_error", async () => {
  const dir = await Deno.makeTempDir();
  const server = startHranaServer(dir, "right-token");
  const db = openLibsql({ url: server.url("site"), authToken: "right-token" });
  const wrong = openLibsql({ url: server.url("site"), authToken: "wrong-token" });
  try {
    await applySchema(db);
    const sent: string[] = [];
    const email = "remote@example.com";
    const s = await signup(db, {
      email,
      password: PASSWORD,
      secret: SECRET,
      sendEmail: (m) => void sent.push(m.text),
      iterations: ITER,
    });
    assert.ok(s.ok);
    const code = sent[0].match(/\b(\d{6})\b/)![1];
    assert.equal(
      (await verifyOtp(db, { email, code, attempt: s.attempt, secret: SECRET })).ok,
      true,
    );
    assert.equal((await login(db, { email, password: PASSWORD, iterations: ITER })).ok, true);
    assert.ok(server.stats.served >= 5, `served ${server.stats.served}`);
    const r = await login(wrong, { email, password: PASSWORD, iterations: ITER });
    assert.deepEqual(r, { ok: false, error: "db_error" });
    assert.ok(server.stats.refused >= 1);
    assert.ok(!JSON.stringify(r).includes("right-token"));
  } finally {
    db.close();
    wrong.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
