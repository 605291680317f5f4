import assert from "node:assert/strict";
import { serve } from "./harness.ts";

// file_server keeps files unchanged for 2 s in memory (see file_cache.ts); these tests let
// the files age past that, fill the cache, then change the files in every way and expect the
// change on the very next request.
const AGE_MS = 2100;

async function fixture() {
  const base = await Deno.makeTempDir({ prefix: "gatehouse-fscache-" });
  const root = `${base}/root`;
  await Deno.mkdir(`${root}/d`, { recursive: true });
  await Deno.writeTextFile(`${base}/secret.txt`, "TOP SECRET");
  await Deno.writeTextFile(`${root}/a.txt`, "aaaaaaaaaa");
  await Deno.writeTextFile(`${root}/b.txt`, "first version");
  await Deno.writeTextFile(`${root}/gone.txt`, "soon gone");
  await Deno.writeTextFile(`${root}/inside.txt`, "inside file");
  await Deno.writeTextFile(`${root}/d/index.html`, "<p>one</p>");
  await Deno.symlink(`${root}/inside.txt`, `${root}/link.txt`);
  const big = new Uint8Array(1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 253;
  await Deno.writeFile(`${root}/big.bin`, big);
  await new Promise((r) => setTimeout(r, AGE_MS));
  return { base, root, big, cleanup: () => Deno.remove(base, { recursive: true }) };
}

async function text(url: string, init?: RequestInit): Promise<[number, string, Headers]> {
  const res = await fetch(url, init);
  return [res.status, await res.text(), res.headers];
}

Deno.test("file_server cache: changed, replaced, deleted files and swapped links are served fresh", async () => {
  const f = await fixture();
  const srv = await serve([{ handle: [{ handler: "file_server", root: f.root }] }]);
  try {
    const b = srv.url();
    // Fill the cache.
    for (let i = 0; i < 3; i++) {
      assert.deepEqual((await text(`${b}/a.txt`)).slice(0, 2), [200, "aaaaaaaaaa"]);
      assert.equal((await text(`${b}/b.txt`))[1], "first version");
      assert.equal((await text(`${b}/gone.txt`))[1], "soon gone");
      assert.equal((await text(`${b}/link.txt`))[1], "inside file");
      assert.equal((await text(`${b}/d/`))[1], "<p>one</p>");
    }
    const [, , h1] = await text(`${b}/a.txt`);
    // Same size, written in place, within the same second as the previous read.
    await Deno.writeTextFile(`${f.root}/a.txt`, "bbbbbbbbbb");
    const [s2, body2, h2] = await text(`${b}/a.txt`);
    assert.equal(s2, 200);
    assert.equal(body2, "bbbbbbbbbb");
    assert.equal(h2.get("content-length"), "10");
    // Served fresh again on the next requests (not cached while racy, then cached anew).
    assert.equal((await text(`${b}/a.txt`))[1], "bbbbbbbbbb");
    // The old ETag no longer yields 304 once the file changed (mtime moved on).
    if (h1.get("etag") !== h2.get("etag")) {
      const [s] = await text(`${b}/a.txt`, { headers: { "if-none-match": h1.get("etag")! } });
      assert.equal(s, 200);
    }
    // Replaced by rename.
    await Deno.writeTextFile(`${f.base}/b.new`, "second version!");
    await Deno.rename(`${f.base}/b.new`, `${f.root}/b.txt`);
    const [s3, body3, h3] = await text(`${b}/b.txt`);
    assert.equal(s3, 200);
    assert.equal(body3, "second version!");
    assert.equal(h3.get("content-length"), "15");
    // Deleted.
    await Deno.remove(`${f.root}/gone.txt`);
    assert.equal((await text(`${b}/gone.txt`))[0], 404);
    // A link swapped to point outside the root: refused at once.
    await Deno.remove(`${f.root}/link.txt`);
    await Deno.symlink(`${f.base}/secret.txt`, `${f.root}/link.txt`);
    const [s4, body4] = await text(`${b}/link.txt`);
    assert.equal(s4, 404);
    assert.ok(!body4.includes("TOP SECRET"));
    // An index file changed.
    await Deno.writeTextFile(`${f.root}/d/index.html`, "<p>two</p>");
    assert.equal((await text(`${b}/d/`))[1], "<p>two</p>");
  } finally {
    await srv.stop();
    await f.cleanup();
  }
});

Deno.test("file_server cache: cached files keep ETag, 304, Range, HEAD; a large one stays intact", async () => {
  const f = await fixture();
  const srv = await serve([{ handle: [{ handler: "file_server", root: f.root }] }]);
  try {
    const b = srv.url();
    const first = await fetch(`${b}/a.txt`);
    const etag = first.headers.get("etag")!;
    const lastModified = first.headers.get("last-modified")!;
    await first.body?.cancel();
    for (let i = 0; i < 3; i++) {
      const [s, body, h] = await text(`${b}/a.txt`);
      assert.equal(s, 200);
      assert.equal(body, "aaaaaaaaaa");
      assert.equal(h.get("etag"), etag);
      assert.equal(h.get("last-modified"), lastModified);
      assert.equal(h.get("accept-ranges"), "bytes");
      assert.equal(h.get("content-type"), "text/plain; charset=utf-8");
      assert.equal(h.get("content-length"), "10");
      assert.equal(h.get("server"), "Gatehouse");
    }
    assert.equal((await text(`${b}/a.txt`, { headers: { "if-none-match": etag } }))[0], 304);
    assert.equal(
      (await text(`${b}/a.txt`, { headers: { "if-modified-since": lastModified } }))[0],
      304,
    );
    const [sr, br, hr] = await text(`${b}/a.txt`, { headers: { range: "bytes=2-4" } });
    assert.deepEqual([sr, br, hr.get("content-range")], [206, "aaa", "bytes 2-4/10"]);
    const head = await fetch(`${b}/a.txt`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("content-length"), "10");
    await head.body?.cancel();
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${b}/big.bin`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-length"), String(f.big.length));
      assert.deepEqual(new Uint8Array(await res.arrayBuffer()), f.big);
    }
    const part = await fetch(`${b}/big.bin`, { headers: { range: "bytes=1000-1009" } });
    assert.equal(part.status, 206);
    assert.deepEqual(new Uint8Array(await part.arrayBuffer()), f.big.subarray(1000, 1010));
  } finally {
    await srv.stop();
    await f.cleanup();
  }
});

Deno.test("file_server: a path seen missing is served as soon as it appears (created, renamed in, new directory)", async () => {
  const f = await fixture();
  const srv = await serve([{ handle: [{ handler: "file_server", root: f.root }] }]);
  try {
    const b = srv.url();
    const paths = ["/new.txt", "/d/new.txt", "/moved.txt", "/later/x.txt"];
    for (let i = 0; i < 3; i++) {
      for (const p of paths) assert.equal((await text(`${b}${p}`))[0], 404, p);
    }
    await Deno.writeTextFile(`${f.root}/new.txt`, "created");
    await Deno.writeTextFile(`${f.root}/d/new.txt`, "created in d");
    await Deno.writeTextFile(`${f.base}/outside.txt`, "renamed in");
    await Deno.rename(`${f.base}/outside.txt`, `${f.root}/moved.txt`);
    await Deno.mkdir(`${f.root}/later`);
    await Deno.writeTextFile(`${f.root}/later/x.txt`, "in a new directory");
    assert.deepEqual((await text(`${b}/new.txt`)).slice(0, 2), [200, "created"]);
    assert.deepEqual((await text(`${b}/d/new.txt`)).slice(0, 2), [200, "created in d"]);
    assert.deepEqual((await text(`${b}/moved.txt`)).slice(0, 2), [200, "renamed in"]);
    assert.deepEqual((await text(`${b}/later/x.txt`)).slice(0, 2), [200, "in a new directory"]);
    await Deno.remove(`${f.root}/new.txt`);
    assert.equal((await text(`${b}/new.txt`))[0], 404);
  } finally {
    await srv.stop();
    await f.cleanup();
  }
});
