import assert from "node:assert/strict";
import {
  cleanUpOwnLocks,
  fileStorage,
  writeFileAtomic,
} from "../../lib/server/storage/file_system.ts";
import { autosavePath, configDir, dataDir } from "../../lib/server/storage/dirs.ts";

Deno.test("file_system storage: store/load/list/exists/delete, keys stay under the root", async () => {
  const root = await Deno.makeTempDir();
  try {
    const s = fileStorage(root);
    const enc = new TextEncoder();
    await s.store("certs/a/cert.pem", enc.encode("A"));
    await s.store("certs/b.pem", enc.encode("B"));
    assert.equal(new TextDecoder().decode((await s.load("certs/a/cert.pem"))!), "A");
    assert.equal(await s.load("nope"), null);
    assert.equal(await s.exists("certs/b.pem"), true);
    assert.deepEqual(await s.list("certs", false), ["certs/a", "certs/b.pem"]);
    assert.deepEqual(await s.list("certs", true), ["certs/a", "certs/a/cert.pem", "certs/b.pem"]);
    await s.delete("certs/a");
    assert.equal(await s.exists("certs/a/cert.pem"), false);
    await assert.rejects(s.load("../escape"), /invalid storage key/);
    assert.equal((await Deno.stat(`${root}/certs/b.pem`)).mode! & 0o777, 0o600);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("locks are exclusive; a waiter gets the lock after unlock; own locks are cleaned up", async () => {
  const root = await Deno.makeTempDir();
  try {
    const s = fileStorage(root);
    await s.lock("job");
    let got = false;
    const waiter = s.lock("job").then(() => (got = true));
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(got, false);
    await s.unlock("job");
    await waiter;
    assert.equal(got, true);
    await s.lock("other");
    cleanUpOwnLocks();
    assert.deepEqual([...Deno.readDirSync(`${root}/locks`)], []);
    // a stale lock (not refreshed for over 10 s) is taken over
    await Deno.writeTextFile(`${root}/locks/stale.lock`, "{}");
    const old = new Date(Date.now() - 60_000);
    await Deno.utime(`${root}/locks/stale.lock`, old, old);
    await s.lock("stale");
    await s.unlock("stale");
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("atomic writes replace whole files; directories follow XDG variables", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeFileAtomic(`${dir}/sub/f.json`, new TextEncoder().encode("one"));
    await writeFileAtomic(`${dir}/sub/f.json`, new TextEncoder().encode("two"));
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
