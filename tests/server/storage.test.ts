/**
 * The storage contract, run as one suite on every storage module (`file_system` on a temp
 * directory, `libsql` on a temp database file and on a remote database: the Hrana test server
 * of tests/d1 over loopback HTTP, with an auth token), plus what is particular to each: file
 * modes, XDG directories, a holder killed with SIGKILL, locks released on SIGQUIT.
 */
import assert from "node:assert/strict";
import { fileStorage, writeFileAtomic } from "../../lib/server/storage/file_system.ts";
import { openLibsqlStorage } from "../../lib/server/storage/libsql.ts";
import {
  cleanUpOwnLocks,
  ownLockCount,
  safeKey,
  type Storage,
  StorageKeyError,
  storageKeys,
  StorageNotFoundError,
} from "../../lib/server/module/storage.ts";
import { autosavePath, configDir, dataDir } from "../../lib/server/storage/dirs.ts";
import type { ModuleInstance } from "../../lib/server/module/instance.ts";
import { startHranaServer } from "../d1/_hrana_server.ts";
import { holdSqliteWriteLock } from "./fixtures/sqlite_lock.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

interface Backend {
  name: string;
  /** Two handles on the same storage, as two processes would have. */
  open(): Promise<{ a: Storage; b: Storage; close(): Promise<void>; where: string }>;
  /** Puts a lock whose holder stopped refreshing it a minute ago. */
  plantStaleLock(where: string, name: string): Promise<void>;
  /** The storage config of a process (for the kill -9 and SIGQUIT tests). */
  config(where: string): Record<string, unknown>;
}

/** The remote libSQL server's token (the suite's processes get it in their storage config). */
const TOKEN = "storage-suite-token";

const backends: Backend[] = [
  {
    name: "file_system",
    async open() {
      const root = await Deno.makeTempDir({ prefix: "gatehouse-storage-" });
      return {
        a: fileStorage(root),
        b: fileStorage(root),
        where: root,
        close: () => Deno.remove(root, { recursive: true }),
      };
    },
    async plantStaleLock(root, name) {
      await Deno.mkdir(`${root}/locks`, { recursive: true });
      const old = new Date(Date.now() - 60_000).toISOString();
      await Deno.writeTextFile(
        `${root}/locks/${safeKey(name)}.lock`,
        JSON.stringify({ created: old, updated: old }),
      );
    },
    config: (root) => ({ module: "file_system", root }),
  },
  {
    name: "libsql",
    async open() {
      const dir = await Deno.makeTempDir({ prefix: "gatehouse-storage-" });
      const url = `file:${dir}/storage.db`;
      const a = await openLibsqlStorage({ url });
      const b = await openLibsqlStorage({ url });
      return {
        a,
        b,
        where: url,
        async close() {
          await (a as ModuleInstance).cleanup?.();
          await (b as ModuleInstance).cleanup?.();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
    async plantStaleLock(url, name) {
      const { createClient } = await import("@libsql/client");
      const c = createClient({ url });
      await c.execute({
        sql: "INSERT INTO gatehouse_storage_locks (name, owner, updated) VALUES (?, 'dead', ?)",
        args: [name, Date.now() - 60_000],
      });
      c.close();
    },
    config: (url) => ({ module: "libsql", url }),
  },
  {
    name: "libsql remote",
    async open() {
      const dir = await Deno.makeTempDir({ prefix: "gatehouse-storage-" });
      const server = startHranaServer(dir, TOKEN);
      const url = server.url("storage");
      const a = await openLibsqlStorage({ url, authToken: TOKEN });
      const b = await openLibsqlStorage({ url, authToken: TOKEN });
      return {
        a,
        b,
        where: url,
        async close() {
          await (a as ModuleInstance).cleanup?.();
          await (b as ModuleInstance).cleanup?.();
          // everything above went over HTTP, with the token
          assert.ok(server.stats.served > 0);
          assert.equal(server.stats.refused, 0);
          await server.close();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
    async plantStaleLock(url, name) {
      const { createClient } = await import("@libsql/client");
      const c = createClient({ url, authToken: TOKEN });
      await c.execute({
        sql: "INSERT INTO gatehouse_storage_locks (name, owner, updated) VALUES (?, 'dead', ?)",
        args: [name, Date.now() - 60_000],
      });
      c.close();
    },
    config: (url) => ({ module: "libsql", url, auth_token: TOKEN }),
  },
];

for (const be of backends) {
  Deno.test(`storage contract (${be.name}): files, directories, listing, not-found, bad keys`, async () => {
    const { a, b, close } = await be.open();
    try {
      await a.store("certificates/local/localhost/localhost.crt", enc("CRT"));
      await a.store("certificates/local/localhost/localhost.key", enc("KEY"));
      await a.store("pki/authorities/local/root.crt", enc("ROOT"));
      const bin = new Uint8Array([0, 255, 1, 254, 10, 13]);
      await a.store("bin/value", bin);
      // another handle (another process) sees the same values
      assert.equal(dec(await b.load("certificates/local/localhost/localhost.crt")), "CRT");
      assert.deepEqual(await b.load("bin/value"), bin);
      await b.store("certificates/local/localhost/localhost.crt", enc("CRT2"));
      assert.equal(dec(await a.load("/certificates//local/localhost/localhost.crt/")), "CRT2");

      assert.deepEqual(await a.list("certificates", false), ["certificates/local"]);
      assert.deepEqual(await a.list("certificates", true), [
        "certificates/local",
        "certificates/local/localhost",
        "certificates/local/localhost/localhost.crt",
        "certificates/local/localhost/localhost.key",
      ]);
      assert.deepEqual(await a.list("", false), ["bin", "certificates", "pki"]);
      assert.ok((await a.list("", true)).includes("pki/authorities/local/root.crt"));

      const file = await a.stat("pki/authorities/local/root.crt");
      assert.equal(file.isTerminal, true);
      assert.equal(file.size, 4);
      assert.ok(Math.abs(file.modified.getTime() - Date.now()) < 120_000);
      const dir = await a.stat("certificates/local");
      assert.equal(dir.isTerminal, false);
      assert.equal(await a.exists("certificates/local"), true);
      assert.equal(await a.exists("certificates/loc"), false, "prefixes are whole components");

      for (const op of [() => a.load("nope"), () => a.stat("nope"), () => a.list("nope", true)]) {
        await assert.rejects(op(), (e: unknown) => {
          assert.ok(e instanceof StorageNotFoundError);
          assert.equal((e as StorageNotFoundError).code, "not_found");
          return true;
        });
      }
      await assert.rejects(a.delete("nope"), StorageNotFoundError);
      await a.delete("certificates/local");
      assert.equal(await a.exists("certificates/local/localhost/localhost.key"), false);
      assert.equal(await a.exists("pki/authorities/local/root.crt"), true, "siblings are kept");
      for (const bad of ["../escape", "a/../../b", "a/./b", "a\\b", "a\u0000b"]) {
        await assert.rejects(a.load(bad), StorageKeyError, bad);
        await assert.rejects(a.store(bad, enc("x")), StorageKeyError, bad);
      }
    } finally {
      await close();
    }
  });

  Deno.test(`storage contract (${be.name}): locks are exclusive, tryLock, waiting, stale takeover, own-lock cleanup`, async () => {
    const { a, b, close, where } = await be.open();
    try {
      await a.lock("issue_cert_example.com");
      assert.equal(await b.tryLock("issue_cert_example.com"), false);
      let got = false;
      const waiter = b.lock("issue_cert_example.com").then(() => (got = true));
      await new Promise((r) => setTimeout(r, 600));
      assert.equal(got, false, "the second holder waits");
      await a.unlock("issue_cert_example.com");
      await waiter;
      assert.equal(got, true);
      assert.equal(await a.tryLock("issue_cert_example.com"), false);
      await b.unlock("issue_cert_example.com");
      assert.equal(await a.tryLock("issue_cert_example.com"), true);
      await a.unlock("issue_cert_example.com");

      // a waiter can give up
      await a.lock("busy");
      const ac = new AbortController();
      const giveUp = b.lock("busy", ac.signal);
      ac.abort(new Error("gave up"));
      await assert.rejects(giveUp, /gave up/);
      await a.unlock("busy");

      // a lock whose holder died (not refreshed for a minute) is taken over at once
      await be.plantStaleLock(where, "stale");
      assert.equal(await b.tryLock("stale"), true);
      await b.unlock("stale");

      // cleanUpOwnLocks releases what this process holds
      await a.lock("one");
      await b.lock("two");
      assert.equal(ownLockCount(), 2);
      await cleanUpOwnLocks();
      assert.equal(ownLockCount(), 0);
      assert.equal(await a.tryLock("two"), true);
      assert.equal(await b.tryLock("one"), true);
      await a.unlock("two");
      await b.unlock("one");
    } finally {
      await close();
    }
  });

  Deno.test(`storage (${be.name}): a holder killed with SIGKILL blocks others only until its lock goes stale; SIGQUIT releases locks`, async () => {
    const { a, close, where } = await be.open();
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-lock-holder-" });
    try {
      const script = `${dir}/holder.ts`;
      await Deno.writeTextFile(
        script,
        `import "${ROOT}lib/server/storage/register.ts";
import { getModule } from "${ROOT}lib/server/module/mod.ts";
import { Engine } from "${ROOT}lib/server/engine.ts";
import { ProcessLife } from "${ROOT}lib/cli/process.ts";
const cfg = JSON.parse(Deno.args[0]);
const { module, ...rest } = cfg;
const s = await getModule("caddy.storage." + module)!.create(rest, {} as never) as never as {
  lock(n: string): Promise<void>;
};
await s.lock(Deno.args[1]);
const life = new ProcessLife(new Engine({ defaultAdmin: false }));
life.installSignals();
console.log("locked");
await life.exited;
`,
      );
      const spawn = (name: string) => {
        const child = new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "-A",
            "--config",
            `${ROOT}deno.json`,
            script,
            JSON.stringify(be.config(where)),
            name,
          ],
          stdout: "piped",
          stderr: "inherit",
        }).spawn();
        const ready = (async () => {
          const reader = child.stdout.getReader();
          let text = "";
          while (!text.includes("locked")) {
            const r = await reader.read();
            if (r.done) throw new Error("lock holder exited early");
            text += dec(r.value);
          }
          reader.releaseLock();
          child.stdout.cancel().catch(() => {});
        })();
        return { child, ready };
      };

      const killed = spawn("held_by_killed");
      await killed.ready;
      assert.equal(await a.tryLock("held_by_killed"), false);
      killed.child.kill("SIGKILL");
      assert.equal((await killed.child.status).signal, "SIGKILL");
      const t0 = Date.now();
      await a.lock("held_by_killed"); // waits for staleness (10 s without refresh)
      assert.ok(Date.now() - t0 < 30_000);
      await a.unlock("held_by_killed");

      const quit = spawn("held_by_quitter");
      await quit.ready;
      assert.equal(await a.tryLock("held_by_quitter"), false);
      quit.child.kill("SIGQUIT");
      assert.equal((await quit.child.status).code, 2);
      assert.equal(await a.tryLock("held_by_quitter"), true, "SIGQUIT released the lock at once");
      await a.unlock("held_by_quitter");
    } finally {
      await Deno.remove(dir, { recursive: true });
      await close();
    }
  });
}

Deno.test("file_system storage: 0600 files and 0700 directories, atomic replacement, key builders", async () => {
  const root = await Deno.makeTempDir();
  try {
    const s = fileStorage(root);
    await s.store(storageKeys.siteCert("local", "*.Example.com"), enc("A"));
    const path = `${root}/certificates/local/wildcard_.example.com/wildcard_.example.com.crt`;
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(`${root}/certificates/local`)).mode! & 0o777, 0o700);
    assert.equal(storageKeys.caRootCert("local"), "pki/authorities/local/root.crt");
    assert.equal(
      storageKeys.siteMeta("local", "localhost"),
      "certificates/local/localhost/localhost.json",
    );
    assert.equal(safeKey("a:b+c d/../e"), "a-b_plus_c_de");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("atomic writes replace whole files; directories follow XDG variables", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeFileAtomic(`${dir}/sub/f.json`, enc("one"));
    await writeFileAtomic(`${dir}/sub/f.json`, enc("two"));
    assert.equal(await Deno.readTextFile(`${dir}/sub/f.json`), "two");
    assert.deepEqual([...Deno.readDirSync(`${dir}/sub`)].map((e) => e.name), ["f.json"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const saved = { c: Deno.env.get("XDG_CONFIG_HOME"), d: Deno.env.get("XDG_DATA_HOME") };
  try {
    Deno.env.set("XDG_CONFIG_HOME", "/x/cfg");
    Deno.env.set("XDG_DATA_HOME", "/x/data");
    assert.equal(configDir(), "/x/cfg/gatehouse");
    assert.equal(autosavePath(), "/x/cfg/gatehouse/autosave.json");
    assert.equal(dataDir(), "/x/data/gatehouse");
  } finally {
    for (const [k, v] of [["XDG_CONFIG_HOME", saved.c], ["XDG_DATA_HOME", saved.d]] as const) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  }
});

Deno.test("libsql storage (file): concurrent calls wait for another process's write lock instead of failing with SQLITE_BUSY", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-storage-" });
  const s = await openLibsqlStorage({ url: `file:${dir}/busy.db` });
  try {
    await s.store("before", enc("x"));
    // Concurrent calls: the client's pool opens more connections than its first, and the
    // next calls take the last one opened.
    await Promise.all(Array.from({ length: 8 }, () => s.load("before")));
    // Another process takes the write lock and keeps it for two seconds.
    const { released } = await holdSqliteWriteLock(`${dir}/busy.db`, 2);
    for (let i = 0; i < 8; i++) await s.store(`k/${i}`, enc(String(i)));
    await released;
    assert.deepEqual(await s.list("k", false), Array.from({ length: 8 }, (_, i) => `k/${i}`));
    assert.equal(await s.tryLock("after"), true);
    await s.unlock("after");
  } finally {
    await (s as unknown as ModuleInstance).cleanup?.();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("libsql storage: config errors are clear; the auth token never appears in messages", async () => {
  const { libsqlStorageModule } = await import("../../lib/server/storage/libsql.ts");
  const create = (c: Record<string, unknown>) =>
    Promise.resolve().then(() => libsqlStorageModule.create(c, {} as never));
  await assert.rejects(create({}), /url is required/);
  await assert.rejects(create({ url: "file:/tmp/x.db", tabel: "x" }), /unknown field "tabel"/);
  await assert.rejects(create({ url: "file:/tmp/x.db", table: "x; drop" }), /plain SQL name/);
  await assert.rejects(
    create({ url: "file:/tmp/x.db", auth_token: "{env.GATEHOUSE_TEST_UNSET_TOKEN}" }),
    /GATEHOUSE_TEST_UNSET_TOKEN is not set/,
  );
  await assert.rejects(
    // a directory that cannot be made (a file is in the way)
    create({ url: "file:/dev/null/nonexistent-dir-gatehouse/x.db", auth_token: "s3cret-token" }),
    (e: Error) => {
      assert.match(
        e.message,
        /libsql storage: (opening|preparing) file:.*nonexistent-dir-gatehouse/,
      );
      assert.ok(!e.message.includes("s3cret-token"));
      return true;
    },
  );
});

Deno.test("storage export | storage import: a round trip onto an empty storage keeps every key (file_system → libsql)", async () => {
  const { readTar } = await import("../../lib/server/storage/tar.ts");
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-export-" });
  try {
    const src = fileStorage(`${dir}/src`);
    const values: Record<string, Uint8Array> = {
      "pki/authorities/local/root.crt": enc("-----BEGIN CERTIFICATE-----\nroot\n"),
      "pki/authorities/local/root.key": new Uint8Array([0, 1, 2, 255]),
      "certificates/local/localhost/localhost.json": enc('{"sans":["localhost"]}'),
      [`certificates/local/${"long-name.".repeat(20)}x/${"long-name.".repeat(20)}x.crt`]: enc("L"),
    };
    for (const [k, v] of Object.entries(values)) await src.store(k, v);
    await src.lock("held"); // locks are never exported
    await Deno.writeTextFile(
      `${dir}/src.json`,
      JSON.stringify({ storage: backends[0].config(`${dir}/src`) }),
    );
    await Deno.writeTextFile(
      `${dir}/dst.json`,
      JSON.stringify({ storage: { module: "libsql", url: `file:${dir}/dst.db` } }),
    );
    const cli = (args: string[], stdin: "piped" | "null") =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--config", `${ROOT}deno.json`, `${ROOT}cli.ts`, ...args],
        stdin,
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    const exp = cli(["storage", "export", "-c", `${dir}/src.json`, "-o", "-"], "null");
    const imp = cli(["storage", "import", "--config", `${dir}/dst.json`, "--input", "-"], "piped");
    const [tee1, tee2] = exp.stdout.tee();
    const piped = tee1.pipeTo(imp.stdin);
    const archive = new Response(tee2).arrayBuffer();
    const errs = Promise.all([new Response(exp.stderr).text(), new Response(imp.stderr).text()]);
    imp.stdout.cancel();
    const [es, is] = await Promise.all([exp.status, imp.status, piped]);
    const [eErr, iErr] = await errs;
    assert.equal(es.code, 0, eErr);
    assert.equal(is.code, 0, iErr);
    assert.match(eErr, /exported 4 keys/);
    assert.match(iErr, /imported 4 keys/);
    const names: string[] = [];
    for await (const e of readTar(new Blob([await archive]).stream())) names.push(e.name);
    assert.deepEqual(names.sort(), Object.keys(values).sort());
    const dst = await openLibsqlStorage({ url: `file:${dir}/dst.db` });
    try {
      for (const [k, v] of Object.entries(values)) assert.deepEqual(await dst.load(k), v, k);
      assert.deepEqual(
        (await dst.list("", true)).filter((k) => (values[k] !== undefined)).sort(),
        Object.keys(values).sort(),
      );
      assert.equal(await dst.exists("locks"), false);
    } finally {
      await (dst as ModuleInstance).cleanup?.();
      await src.unlock("held");
    }
    // flags are checked; a broken archive writes nothing
    const noOut = await cli(["storage", "export", "-c", `${dir}/src.json`], "null").output();
    assert.equal(noOut.code, 1);
    assert.match(dec(noOut.stderr), /--output is required/);
    await Deno.writeTextFile(`${dir}/bad.tar`, "x".repeat(600));
    const bad = await cli(
      ["storage", "import", "-c", `${dir}/src.json`, "-i", `${dir}/bad.tar`],
      "null",
    )
      .output();
    assert.equal(bad.code, 1);
    assert.match(dec(bad.stderr), /bad header checksum at byte 0/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tar reader: never throws anything but TarError on arbitrary bytes, round-trips any keys", async () => {
  const fc = (await import("fast-check")).default;
  const { readTar, tarEntry, tarEnd, TarError } = await import("../../lib/server/storage/tar.ts");
  const readAll = async (bytes: Uint8Array) => {
    const out = [];
    for await (const e of readTar(new Blob([bytes as Uint8Array<ArrayBuffer>]).stream())) {
      out.push(e);
    }
    return out;
  };
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), async (bytes) => {
      try {
        await readAll(bytes);
      } catch (e) {
        if (!(e instanceof TarError)) throw e;
      }
    }),
    { numRuns: 300 },
  );
  const key = fc.array(fc.stringMatching(/^[a-z0-9._@-]{1,40}$/), { minLength: 1, maxLength: 8 })
    .map((p) => p.join("/"));
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(key, fc.uint8Array({ maxLength: 700 })), { maxLength: 5 }),
      async (files) => {
        const when = new Date(1_700_000_000_000);
        const parts = files.map(([name, data]) => tarEntry({ name, data, modified: when }));
        const bytes = new Uint8Array(await new Blob([...parts, tarEnd()]).arrayBuffer());
        const back = await readAll(bytes);
        assert.deepEqual(back.map((e) => [e.name, e.data]), files);
        // any truncation is refused, never read as a shorter archive
        if (files.length) {
          const cut = bytes.subarray(0, bytes.length - 1024 - 1);
          await assert.rejects(readAll(cut), TarError);
        }
      },
    ),
    { numRuns: 150 },
  );
});
