import assert from "node:assert/strict";
import { startServer } from "../../admin.ts";
import { loggerAllowed } from "../../lib/server/logging/pipeline.ts";
import { call, until } from "./fixtures/helpers.ts";

async function lines(path: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

async function withLogs(
  logs: Record<string, unknown>,
  fn: (dir: string, s: Awaited<ReturnType<typeof startServer>>) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  const withDir = JSON.parse(JSON.stringify(logs).replaceAll("$DIR", dir));
  const s = await startServer({
    adminAddress: "127.0.0.1:0",
    config: { logging: { logs: withDir } },
  });
  try {
    await fn(dir, s);
  } finally {
    await s.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("json entries carry level, fractional ts, logger, msg and typed fields; no secrets from admin requests", async () => {
  await withLogs({
    default: { writer: { output: "file", filename: "$DIR/all.log" }, level: "DEBUG" },
  }, async (dir, s) => {
    s.engine.log.named("test.unit").info("hello", { n: 1, ok: true, err: new Error("boom") });
    await call(s.adminUrl!, "GET", "/config/", undefined, {
      authorization: "Bearer hunter2-secret",
    });
    const all = await lines(`${dir}/all.log`);
    const hello = all.find((l) => l.msg === "hello")!;
    assert.equal(hello.level, "info");
    assert.equal(hello.logger, "test.unit");
    assert.equal(typeof hello.ts, "number");
    assert.ok(!Number.isInteger(hello.ts) || (hello.ts as number) > 1e9);
    assert.deepEqual([hello.n, hello.ok, hello.err], [1, true, "boom"]);
    assert.ok(all.some((l) => l.logger === "admin.api" && l.msg === "received request"));
    assert.ok(!(await Deno.readTextFile(`${dir}/all.log`)).includes("hunter2"));
  });
});

Deno.test("levels: messages below the log's level are dropped", async () => {
  await withLogs(
    { default: { writer: { output: "file", filename: "$DIR/w.log" }, level: "WARN" } },
    async (dir, s) => {
      const l = s.engine.log.named("lv");
      l.debug("d");
      l.info("i");
      l.warn("w");
      l.error("e");
      assert.equal(l.enabled("INFO"), false);
      assert.equal(l.enabled("ERROR"), true);
      assert.deepEqual(
        (await lines(`${dir}/w.log`)).filter((x) => x.logger === "lv").map((x) => x.msg),
        ["w", "e"],
      );
    },
  );
});

Deno.test("sampling keeps the first N per interval, then every Mth", async () => {
  await withLogs({
    default: {
      writer: { output: "file", filename: "$DIR/s.log" },
      sampling: { interval: "1h", first: 2, thereafter: 3 },
    },
  }, async (dir, s) => {
    const l = s.engine.log.named("hot");
    for (let i = 1; i <= 11; i++) l.info("same message", { i });
    l.info("other message");
    const got = (await lines(`${dir}/s.log`)).filter((x) => x.logger === "hot");
    assert.deepEqual(got.map((x) => x.i ?? x.msg), [1, 2, 5, 8, 11, "other message"]);
  });
});

Deno.test("include/exclude route loggers; by default every message goes to every log", async () => {
  await withLogs({
    access: {
      writer: { output: "file", filename: "$DIR/access.log" },
      include: ["http.log.access"],
    },
    noadmin: {
      writer: { output: "file", filename: "$DIR/noadmin.log" },
      exclude: ["admin", "http"],
    },
    nested: {
      writer: { output: "file", filename: "$DIR/nested.log" },
      include: ["http"],
      exclude: ["http.log"],
    },
    default: { writer: { output: "file", filename: "$DIR/default.log" } },
  }, async (dir, s) => {
    s.engine.log.named("http.log.access.srv0").info("handled request");
    s.engine.log.named("admin.api").info("api");
    s.engine.log.named("adminx").info("not admin");
    s.engine.log.named("http.handlers.x").info("handler");
    const read = async (name: string) => (await lines(`${dir}/${name}.log`)).map((x) => x.msg);
    assert.deepEqual(await read("access"), ["handled request"]);
    const noadmin = await read("noadmin");
    assert.ok(noadmin.includes("not admin"));
    assert.ok(
      !noadmin.includes("api") && !noadmin.includes("handler") &&
        !noadmin.includes("handled request"),
    );
    assert.deepEqual(await read("nested"), ["handler"]);
    const all = await read("default");
    for (const m of ["handled request", "api", "not admin", "handler"]) {
      assert.ok(all.includes(m), m);
    }
  });
  assert.equal(loggerAllowed("http.log.access.srv0", ["http.log.access"], []), true);
  assert.equal(loggerAllowed("http.log.accessx", ["http.log.access"], []), false);
  assert.equal(loggerAllowed("http.log.access.srv0", ["http"], ["http.log"]), false);
  assert.equal(loggerAllowed("http.log.access.srv0", ["http.log.access"], ["http.log"]), true);
  assert.equal(loggerAllowed("anything", [], ["*"]), false);
});

Deno.test("file writer rolls by size, keeps roll_keep backups, gzips them", async () => {
  await withLogs({
    default: {
      writer: {
        output: "file",
        filename: "$DIR/roll.log",
        roll_size_mb: 0.002,
        roll_keep: 2,
        roll_gzip: true,
      },
    },
  }, async (dir, s) => {
    const l = s.engine.log.named("roll");
    for (let i = 0; i < 80; i++) {
      l.info("x".repeat(100), { i });
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 5));
    }
    // compression, then pruning, run in the background after each roll: wait until only .gz
    // backups remain, roll_keep of them at most (each is gzipped before the prune after it)
    await until(
      () => {
        const b = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
          n.startsWith("roll-")
        );
        return b.length > 0 && b.length <= 2 && b.every((n) => n.endsWith(".gz"));
      },
      5000,
      "gzipped backups, pruned",
    );
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    const backups = names.filter((n) => n.startsWith("roll-"));
    assert.ok(names.includes("roll.log"));
    assert.ok(backups.length >= 1 && backups.length <= 2, names.join(","));
    assert.ok(
      backups.every((n) => /^roll-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\d*\.log\.gz$/.test(n)),
      names.join(","),
    );
    assert.ok(Deno.statSync(`${dir}/roll.log`).size <= 0.002 * 1024 * 1024);
  });
});

Deno.test("net writer sends lines over TCP; discard drops; console encoder is tab-separated", async () => {
  const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received = (async () => {
    const conn = await server.accept();
    let text = "";
    for await (const c of conn.readable) {
      text += new TextDecoder().decode(c);
      if (text.includes("over the net")) break;
    }
    return text;
  })();
  await withLogs({
    net: {
      writer: { output: "net", address: `127.0.0.1:${(server.addr as Deno.NetAddr).port}` },
      include: ["netlog"],
    },
    console: {
      writer: { output: "file", filename: "$DIR/c.log" },
      encoder: { format: "console" },
      include: ["con"],
    },
    gone: { writer: { output: "discard" } },
    default: { writer: { output: "discard" } },
  }, async (dir, s) => {
    s.engine.log.named("netlog").warn("over the net", { k: "v" });
    const got = JSON.parse((await received).trim().split("\n").pop()!);
    assert.deepEqual([got.level, got.logger, got.msg, got.k], [
      "warn",
      "netlog",
      "over the net",
      "v",
    ]);
    s.engine.log.named("con").info("to console", { a: 1 });
    const line = (await Deno.readTextFile(`${dir}/c.log`)).trim();
    const parts = line.split("\t");
    assert.match(parts[0], /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    assert.deepEqual(parts.slice(1), ["INFO", "con", "to console", '{"a":1}']);
  });
  server.close();
});

Deno.test("bad logging config fails the load: unknown writer, level, encoder", async () => {
  const s = await startServer({ adminAddress: "127.0.0.1:0" });
  try {
    for (
      const logs of [
        { default: { writer: { output: "nope" } } },
        { default: { level: "LOUD" } },
        { default: { encoder: { format: "xml" } } },
        { default: { encoder: { format: "json", time_format: "bogus" } } },
        { default: { include: ["a"], exclude: ["a"] } },
        { default: { include: ["a"], exclude: ["b"] } },
      ]
    ) {
      const r = await call(s.adminUrl!, "POST", "/load", { logging: { logs } });
      assert.equal(r.status, 400, JSON.stringify(logs));
    }
  } finally {
    await s.stop();
  }
});

Deno.test("file writer prunes backups older than roll_keep_days", async () => {
  const dir = await Deno.makeTempDir();
  const old = `${dir}/age-2000-01-01T00-00-00.000.log`;
  await Deno.writeTextFile(old, "old\n");
  const past = new Date(Date.now() - 100 * 86_400_000);
  await Deno.utime(old, past, past);
  const s = await startServer({
    config: {
      logging: {
        logs: {
          default: {
            writer: {
              output: "file",
              filename: `${dir}/age.log`,
              roll_size_mb: 0.001,
              roll_keep_days: 1,
              roll_gzip: false,
            },
          },
        },
      },
    },
  });
  try {
    for (let i = 0; i < 30; i++) s.engine.log.named("age").info("y".repeat(100));
    await until(
      () => !Deno.readDirSync(dir).some((e) => e.name === "age-2000-01-01T00-00-00.000.log"),
      5000,
      "pruning",
    );
    assert.ok(
      [...Deno.readDirSync(dir)].some((e) =>
        /^age-\d{4}-.*\.log$/.test(e.name) && !e.name.startsWith("age-2000")
      ),
    );
  } finally {
    await s.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
