/**
 * `file_server` against hostile requests: `Range` headers that would amplify the answer
 * (overlapping, adjacent, thousands of ranges) are coalesced or answered with the whole file,
 * unsatisfiable ones (`bytes=-0`, empty files) get 416 with `Content-Range: bytes *` and the
 * size; dotfiles (`.git/`, `.env`) are not served unless `hide_dotfiles` is false.
 */
import assert from "node:assert/strict";
import { serve } from "./harness.ts";
import { raw } from "./raw.ts";

async function site(): Promise<{ root: string; cleanup: () => Promise<void> }> {
  const base = await Deno.makeTempDir({ prefix: "gatehouse-fsh-" });
  const root = `${base}/root`;
  await Deno.mkdir(`${root}/.git`, { recursive: true });
  await Deno.mkdir(`${root}/.well-known`);
  await Deno.mkdir(`${root}/sub/.hidden`, { recursive: true });
  await Deno.writeTextFile(`${root}/hello.txt`, "0123456789abcdefghij");
  await Deno.writeTextFile(`${root}/empty.txt`, "");
  await Deno.writeTextFile(`${root}/.env`, "SECRET=1");
  await Deno.writeTextFile(`${root}/.git/config`, "[core]");
  await Deno.writeTextFile(`${root}/.well-known/security.txt`, "Contact: x");
  await Deno.writeTextFile(`${root}/sub/.hidden/x.txt`, "x");
  await Deno.writeTextFile(`${root}/sub/visible.txt`, "v");
  const big = new Uint8Array(100_000);
  for (let i = 0; i < big.length; i++) big[i] = i % 251;
  await Deno.writeFile(`${root}/big.bin`, big);
  return { root, cleanup: () => Deno.remove(base, { recursive: true }) };
}

Deno.test("file_server Range: coalesced, capped, 416 with Content-Range for unsatisfiable ones", async () => {
  const s = await site();
  const srv = await serve([{ handle: [{ handler: "file_server", root: s.root }] }]);
  const get = (path: string, range: string) => raw(srv.url(), "GET", path, { range });
  try {
    let r = await get("/hello.txt", "bytes=-0");
    assert.equal(r.status, 416, "a zero-length suffix overlaps nothing");
    assert.equal(r.headers.get("content-range"), "bytes */20");
    r = await get("/hello.txt", "bytes=0-0,-0");
    assert.equal(r.status, 206);
    assert.equal(r.headers.get("content-range"), "bytes 0-0/20");
    assert.equal(r.text, "0");
    r = await get("/empty.txt", "bytes=0-");
    assert.equal(r.status, 416, "no range of an empty file is satisfiable");
    assert.equal(r.headers.get("content-range"), "bytes */0");
    r = await get("/empty.txt", "bytes=-5");
    assert.equal(r.status, 416);
    r = await get("/hello.txt", "bytes=5-2");
    assert.equal(r.status, 416, "malformed");
    assert.equal(r.headers.get("content-range"), "bytes */20");
    r = await get("/hello.txt", "items=0-1");
    assert.equal(r.status, 200, "an unknown range unit is ignored (RFC 9110 §14.2)");
    assert.equal(r.text, "0123456789abcdefghij");

    // Adjacent and overlapping ranges merge into one.
    r = await get("/hello.txt", "bytes=0-1,2-3");
    assert.equal(r.status, 206);
    assert.equal(r.headers.get("content-range"), "bytes 0-3/20");
    assert.equal(r.text, "0123");
    r = await get("/hello.txt", "bytes=4-6,0-1,5-8");
    assert.match(r.headers.get("content-type")!, /^multipart\/byteranges/);
    assert.match(r.text, /Content-Range: bytes 0-1\/20[\s\S]*Content-Range: bytes 4-8\/20/);
    // Disjoint ranges keep the order asked for.
    r = await get("/hello.txt", "bytes=10-11,0-1");
    assert.match(r.text, /Content-Range: bytes 10-11\/20[\s\S]*Content-Range: bytes 0-1\/20/);

    // Thousands of overlapping ranges: one range, not thousands of parts.
    const overlapping = Array.from({ length: 5000 }, (_, i) => `${i}-${i + 99}`).join(",");
    r = await get("/big.bin", `bytes=${overlapping}`);
    assert.equal(r.status, 200, "ranges adding up to more than the file: the whole file");
    assert.equal(r.body.length, 100_000);
    const same = Array.from({ length: 5000 }, () => "0-9").join(",");
    r = await get("/big.bin", `bytes=${same}`);
    assert.equal(r.status, 206, "5000 copies of one range are that range once");
    assert.equal(r.headers.get("content-range"), "bytes 0-9/100000");
    assert.equal(r.body.length, 10);
    const small = Array.from({ length: 3000 }, (_, i) => `${i * 3}-${i * 3 + 3}`).join(",");
    r = await get("/big.bin", `bytes=${small}`);
    assert.equal(r.status, 206, "overlapping ranges within the file size coalesce");
    assert.equal(r.headers.get("content-range"), "bytes 0-9000/100000");
    assert.equal(r.body.length, 9001);

    // Many disjoint ranges: up to 100 parts; more get the whole file.
    const disjoint = (n: number) => Array.from({ length: n }, (_, i) => `${i * 10}-${i * 10}`);
    r = await get("/big.bin", `bytes=${disjoint(100).join(",")}`);
    assert.equal(r.status, 206);
    assert.equal((r.text.match(/Content-Range: /g) ?? []).length, 100);
    assert.equal(Number(r.headers.get("content-length")), r.body.length);
    assert.ok(r.body.length < 20_000, `multipart overhead stays bounded: ${r.body.length}`);
    r = await get("/big.bin", `bytes=${disjoint(101).join(",")}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 100_000);
    r = await get("/big.bin", `bytes=${disjoint(3000).join(",")}`);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 100_000);
  } finally {
    await srv.stop();
    await s.cleanup();
  }
});

Deno.test("file_server dotfiles: 404 and left out of listings by default, .well-known served, hide_dotfiles false serves them", async () => {
  const s = await site();
  const srv = await serve([
    {
      match: [{ path: ["/open/*"] }],
      handle: [
        { handler: "rewrite", strip_path_prefix: "/open" },
        { handler: "file_server", root: s.root, hide_dotfiles: false },
      ],
      terminal: true,
    },
    {
      match: [{ path: ["/pt/*"] }],
      handle: [
        { handler: "rewrite", strip_path_prefix: "/pt" },
        { handler: "file_server", root: s.root, pass_thru: true },
        { handler: "static_response", body: "next handler" },
      ],
      terminal: true,
    },
    { handle: [{ handler: "file_server", root: s.root, browse: {} }] },
  ]);
  const b = srv.url();
  try {
    for (
      const path of ["/.env", "/.git/config", "/.git/", "/%2egit/config", "/sub/.hidden/x.txt"]
    ) {
      const r = await raw(b, "GET", path);
      assert.equal(r.status, 404, path);
      assert.doesNotMatch(r.text, /SECRET|core/, path);
    }
    assert.equal((await raw(b, "GET", "/sub/../.env")).status, 404);
    assert.equal((await raw(b, "GET", "/.well-known/security.txt")).text, "Contact: x");
    assert.equal((await raw(b, "GET", "/sub/visible.txt")).text, "v");
    assert.equal((await raw(b, "GET", "/pt/.env")).text, "next handler");
    const listing = await raw(b, "GET", "/", { accept: "application/json" });
    const names = (JSON.parse(listing.text) as { name: string }[]).map((i) => i.name).sort();
    assert.deepEqual(names, [".well-known/", "big.bin", "empty.txt", "hello.txt", "sub/"]);
    assert.equal((await raw(b, "GET", "/open/.env")).text, "SECRET=1");
    assert.equal((await raw(b, "GET", "/open/.git/config")).text, "[core]");
  } finally {
    await srv.stop();
    await s.cleanup();
  }
  await assert.rejects(
    serve([{ handle: [{ handler: "file_server", root: s.root, hide_dotfiles: "no" }] }]),
    /hide_dotfiles/,
  );
});
