/**
 * The cache's storages against a real origin process: the memory storage (`otter`, its
 * `size` bound as darkweak/storages otter.go, and a byte bound) and the disk storage
 * (`simplefs`, its `path`, `size` and `directory_size` as darkweak/storages simplefs.go):
 * bodies written to files as they stream, answers read back from them, kept across a restart,
 * bounded in bytes, purged with their files.
 */
import assert from "node:assert/strict";
import { serve } from "./harness.ts";
import { type Origin, startOrigin } from "../fixtures/origin_process.ts";

// deno-lint-ignore no-explicit-any
type J = Record<string, any>;

async function cacheServer(origin: Origin, cache: J) {
  return await serve([{
    handle: [
      { handler: "cache", ...cache },
      { handler: "reverse_proxy", upstreams: [{ dial: origin.dial }] },
    ],
  }]);
}

async function get(url: string) {
  const r = await fetch(url);
  const body = new Uint8Array(await r.arrayBuffer());
  return { status: r.status, cs: r.headers.get("cache-status") ?? "", body };
}

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test("cache storage: otter's size bounds the entries; max_bytes the bytes", async () => {
  const origin = await startOrigin();
  const srv = await cacheServer(origin, {
    otter: { configuration: { size: 3, max_bytes: "1MB" } },
  });
  try {
    for (let i = 0; i < 5; i++) await get(`${srv.url()}/entries${i}?cc=max-age%3D60`);
    const [stats] = await (await srv.admin("/cache/")).json();
    assert.equal(stats.entries, 3);
    assert.equal(stats.max_entries, 3);
    assert.equal(stats.max_bytes, 1_000_000);
    // the least recently used went first
    assert.match((await get(`${srv.url()}/entries4?cc=max-age%3D60`)).cs, /hit/);
    assert.match((await get(`${srv.url()}/entries0?cc=max-age%3D60`)).cs, /fwd=uri-miss/);
  } finally {
    await srv.stop();
  }
  // the byte bound: 300 kB bodies in a 1 MB storage
  const bytes = await cacheServer(origin, {
    otter: { configuration: { max_bytes: "1MB" } },
    max_cacheable_body_bytes: 500_000,
  });
  try {
    for (let i = 0; i < 6; i++) await get(`${bytes.url()}/bytes${i}?cc=max-age%3D60&size=300000`);
    const [stats] = await (await bytes.admin("/cache/")).json();
    assert.ok(stats.bytes <= 1_000_000, `${stats.bytes}`);
    assert.equal(stats.entries, 3);
  } finally {
    await bytes.stop();
    await origin.stop();
  }
});

Deno.test("cache storage: simplefs keeps bodies in files written as they stream, and reads answers back from them", async () => {
  const origin = await startOrigin();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-cache-disk-" });
  const cfg = {
    simplefs: { path: dir, configuration: { size: 100, directory_size: "50MB" } },
    max_cacheable_body_bytes: 10_000_000,
    // the restarted server listens on another port: keys without the host
    key: { disable_host: true },
  };
  let srv = await cacheServer(origin, cfg);
  try {
    const big = "/disk-big?cc=max-age%3D600&size=5000000&chunked=1";
    const a = await get(srv.url() + big);
    assert.equal(a.body.length, 5_000_000);
    const small = "/disk-small?cc=max-age%3D600&etag=%22d%22";
    await get(srv.url() + small);
    // the .meta files are written once each entry is stored
    await until(async () => (await files(dir)).filter((n) => n.endsWith(".meta")).length === 2);
    const names = await files(dir);
    assert.equal(names.filter((n) => n.endsWith(".body")).length, 2, names.join());
    assert.equal(names.filter((n) => n.endsWith(".tmp")).length, 0);
    const b = await get(srv.url() + big);
    assert.match(b.cs, /hit/);
    assert.deepEqual(b.body, a.body);
    const [stats] = await (await srv.admin("/cache/")).json();
    assert.equal(stats.kind, "disk");
    assert.equal(stats.path, await Deno.realPath(dir));
    assert.equal(stats.max_bytes, 50_000_000);
    // a restart reads the entries back from the directory
    await srv.stop();
    srv = await cacheServer(origin, cfg);
    const c = await get(srv.url() + big);
    assert.match(c.cs, /hit/);
    assert.equal(c.body.length, 5_000_000);
    assert.match((await get(srv.url() + small)).cs, /hit/);
    assert.equal(await origin.count(big), 1);
    assert.equal(await origin.count(small), 1);
    // a purge drops the files too
    const purged = await fetch((await srv.admin("/cache/")).url + "purge", {
      method: "POST",
      body: JSON.stringify({ all: true }),
    });
    assert.deepEqual(await purged.json(), { purged: 2 });
    await until(async () => (await files(dir)).length === 0);
  } finally {
    await srv.stop();
    await origin.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

async function until(fn: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 10_000;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("cache storage: simplefs's directory_size bounds the bytes on disk, and files of other names are left alone", async () => {
  const origin = await startOrigin();
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-cache-disk-" });
  await Deno.writeTextFile(`${dir}/keep-me.txt`, "not the cache's");
  const srv = await cacheServer(origin, {
    // the directory given inside the configuration, as simplefs.go reads it too
    simplefs: { configuration: { path: dir, directory_size: "350kB" } },
  });
  try {
    for (let i = 0; i < 6; i++) await get(`${srv.url()}/dsize${i}?cc=max-age%3D60&size=100000`);
    const [stats] = await (await srv.admin("/cache/")).json();
    assert.ok(stats.bytes <= 350_000, `${stats.bytes}`);
    assert.equal(stats.entries, 3);
    await until(async () => (await files(dir)).filter((n) => n.endsWith(".body")).length === 3);
    assert.ok((await files(dir)).includes("keep-me.txt"));
  } finally {
    await srv.stop();
    await origin.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
