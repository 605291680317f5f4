import assert from "node:assert/strict";
import zlib from "node:zlib";
import { serve } from "./harness.ts";
import { raw } from "./raw.ts";

async function site(): Promise<{ root: string; outside: string; cleanup: () => Promise<void> }> {
  const base = await Deno.makeTempDir({ prefix: "gatehouse-fs-" });
  const root = `${base}/root`;
  const outside = `${base}/secret.txt`;
  await Deno.mkdir(`${root}/docs/sub`, { recursive: true });
  await Deno.mkdir(`${root}/empty`);
  await Deno.mkdir(`${root}/withindex`);
  await Deno.writeTextFile(outside, "TOP SECRET");
  await Deno.writeTextFile(`${root}/index.html`, "<h1>home</h1>");
  await Deno.writeTextFile(`${root}/withindex/index.html`, "<p>sub index</p>");
  await Deno.writeTextFile(`${root}/hello.txt`, "0123456789abcdefghij");
  await Deno.writeTextFile(`${root}/style.css`, "body{}");
  await Deno.writeTextFile(`${root}/data.json`, "{}");
  await Deno.writeTextFile(`${root}/noext`, "plain");
  await Deno.writeTextFile(`${root}/.env`, "HIDDEN=1");
  await Deno.writeTextFile(`${root}/docs/a.md`, "# a");
  await Deno.writeTextFile(`${root}/docs/bb.txt`, "bbbbbbbbbb");
  await Deno.writeTextFile(`${root}/docs/sub/c.txt`, "c");
  await Deno.writeTextFile(`${root}/a..b.txt`, "dots in name");
  await Deno.writeTextFile(`${root}/%2e%2e`, "literal percent name");
  await Deno.writeTextFile(`${root}/app.js`, "console.log(1)".repeat(50));
  await Deno.writeFile(`${root}/app.js.gz`, zlib.gzipSync(new TextEncoder().encode("GZ")));
  await Deno.writeFile(`${root}/app.js.zst`, zlib.zstdCompressSync(new TextEncoder().encode("ZS")));
  await Deno.symlink(outside, `${root}/escape-link`);
  await Deno.symlink(base, `${root}/escape-dir`);
  await Deno.symlink(`${root}/hello.txt`, `${root}/inside-link.txt`);
  const big = new Uint8Array(1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = i % 251;
  await Deno.writeFile(`${root}/big.bin`, big);
  return { root, outside, cleanup: () => Deno.remove(base, { recursive: true }) };
}

Deno.test("file_server traversal suite: nothing outside the root is ever served", async () => {
  const s = await site();
  const srv = await serve([{ handle: [{ handler: "file_server", root: s.root }] }]);
  try {
    const b = srv.url();
    const attacks = [
      "/../secret.txt",
      "/docs/../../secret.txt",
      "/%2e%2e/secret.txt",
      "/%2E%2E/secret.txt",
      "/docs/%2e%2e/%2e%2e/secret.txt",
      "/%252e%252e/secret.txt",
      "/..%2fsecret.txt",
      "/..%2Fsecret.txt",
      "/%2e%2e%2fsecret.txt",
      "/..\\secret.txt",
      "/%5c..%5csecret.txt",
      "/..%5csecret.txt",
      "/docs/..%5c..%5csecret.txt",
      "/hello.txt%00.png",
      "/%00",
      "/escape-link",
      "/escape-dir/secret.txt",
      "/escape-dir/root/hello.txt",
      "//..//..//secret.txt",
      "/./../secret.txt",
      "/.%2e/secret.txt",
      "/%c0%ae%c0%ae/secret.txt",
    ];
    for (const a of attacks) {
      const r = await raw(b, "GET", a);
      assert.ok(!r.text.includes("TOP SECRET"), `leaked via ${a}`);
      assert.ok(
        [400, 404].includes(r.status) || r.status === 200 && !r.text.includes("SECRET"),
        `${a}: ${r.status}`,
      );
    }
    // Dots that are not traversal stay valid.
    assert.equal((await raw(b, "GET", "/a..b.txt")).text, "dots in name");
    assert.equal((await raw(b, "GET", "/%252e%252e")).text, "literal percent name");
    assert.equal((await raw(b, "GET", "/inside-link.txt")).text, "0123456789abcdefghij");
    assert.equal((await raw(b, "GET", "/docs/../hello.txt")).text, "0123456789abcdefghij");
  } finally {
    await srv.stop();
    await s.cleanup();
  }
});

Deno.test("file_server: index, canonical redirects, content types, hide, 404, pass_thru, status", async () => {
  const s = await site();
  const srv = await serve([
    {
      match: [{ path: ["/pt/*"] }],
      handle: [{ handler: "rewrite", strip_path_prefix: "/pt" }, {
        handler: "file_server",
        root: s.root,
        pass_thru: true,
      }, { handler: "static_response", body: "passed through" }],
      terminal: true,
    },
    {
      match: [{ path: ["/st/*"] }],
      handle: [{ handler: "rewrite", strip_path_prefix: "/st" }, {
        handler: "file_server",
        root: s.root,
        status_code: 202,
      }],
      terminal: true,
    },
    {
      match: [{ path: ["/nc/*"] }],
      handle: [{ handler: "rewrite", strip_path_prefix: "/nc" }, {
        handler: "file_server",
        root: s.root,
        canonical_uris: false,
      }],
      terminal: true,
    },
    {
      handle: [{ handler: "vars", root: s.root }, {
        handler: "file_server",
        hide: [".env", "*.md", `${s.root}/docs/sub`],
      }],
    },
  ]);
  try {
    const b = srv.url();
    let r = await raw(b, "GET", "/");
    assert.equal(r.text, "<h1>home</h1>");
    assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8");
    r = await raw(b, "GET", "/withindex?x=1");
    assert.equal(r.status, 308);
    assert.equal(r.headers.get("location"), "/withindex/?x=1");
    r = await raw(b, "GET", "/hello.txt/");
    assert.equal(r.status, 404, "a file path with a trailing slash does not exist (as in Caddy)");
    r = await raw(b, "GET", "/index.html");
    assert.equal(r.status, 200, "explicit index file is served as is");
    assert.equal(
      (await raw(b, "GET", "/style.css")).headers.get("content-type"),
      "text/css; charset=utf-8",
    );
    assert.equal(
      (await raw(b, "GET", "/data.json")).headers.get("content-type"),
      "application/json",
    );
    assert.equal((await raw(b, "GET", "/noext")).headers.get("content-type"), null);
    assert.equal((await raw(b, "GET", "/.env")).status, 404);
    assert.equal((await raw(b, "GET", "/docs/a.md")).status, 404);
    assert.equal((await raw(b, "GET", "/docs/sub/c.txt")).status, 404);
    assert.equal((await raw(b, "GET", "/docs/bb.txt")).text, "bbbbbbbbbb");
    assert.equal((await raw(b, "GET", "/missing")).status, 404);
    assert.equal((await raw(b, "GET", "/empty/")).status, 404, "directory without index or browse");
    assert.equal((await raw(b, "GET", "/pt/missing")).text, "passed through");
    assert.equal((await raw(b, "GET", "/pt/hello.txt")).text, "0123456789abcdefghij");
    r = await raw(b, "GET", "/st/hello.txt");
    assert.equal(r.status, 202);
    assert.equal((await raw(b, "GET", "/nc/withindex")).status, 200, "no canonical redirect");
    r = await raw(b, "HEAD", "/hello.txt");
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-length"), "20");
  } finally {
    await srv.stop();
    await s.cleanup();
  }
});

Deno.test("file_server: ETag/Last-Modified with 304 and 412, Range 206/multipart/416, If-Range", async () => {
  const s = await site();
  const srv = await serve([{ handle: [{ handler: "file_server", root: s.root }] }]);
  try {
    const b = srv.url();
    const full = await raw(b, "GET", "/hello.txt");
    const etag = full.headers.get("etag")!;
    const lm = full.headers.get("last-modified")!;
    assert.match(etag, /^"[0-9a-z]+"$/);
    assert.ok(lm.endsWith("GMT"));
    assert.equal(full.headers.get("accept-ranges"), "bytes");
    let r = await raw(b, "GET", "/hello.txt", { "if-none-match": etag });
    assert.equal(r.status, 304);
    assert.equal(r.text, "");
    assert.equal(r.headers.get("etag"), etag);
    r = await raw(b, "GET", "/hello.txt", { "if-none-match": `W/${etag}` });
    assert.equal(r.status, 304, "weak comparison for If-None-Match");
    r = await raw(b, "GET", "/hello.txt", { "if-modified-since": lm });
    assert.equal(r.status, 304);
    r = await raw(b, "GET", "/hello.txt", { "if-modified-since": "Mon, 01 Jan 2001 00:00:00 GMT" });
    assert.equal(r.status, 200);
    r = await raw(b, "GET", "/hello.txt", { "if-match": '"other"' });
    assert.equal(r.status, 412);
    r = await raw(b, "GET", "/hello.txt", {
      "if-unmodified-since": "Mon, 01 Jan 2001 00:00:00 GMT",
    });
    assert.equal(r.status, 412);
    r = await raw(b, "GET", "/hello.txt", { range: "bytes=2-5" });
    assert.equal(r.status, 206);
    assert.equal(r.text, "2345");
    assert.equal(r.headers.get("content-range"), "bytes 2-5/20");
    r = await raw(b, "GET", "/hello.txt", { range: "bytes=-3" });
    assert.equal(r.text, "hij");
    r = await raw(b, "GET", "/hello.txt", { range: "bytes=18-" });
    assert.equal(r.text, "ij");
    r = await raw(b, "GET", "/hello.txt", { range: "bytes=0-1,4-5" });
    assert.equal(r.status, 206);
    const ct = r.headers.get("content-type")!;
    assert.match(ct, /^multipart\/byteranges; boundary=/);
    assert.match(
      r.text,
      /Content-Range: bytes 0-1\/20\r\nContent-Type: text\/plain; charset=utf-8\r\n\r\n01\r\n/,
    );
    assert.match(r.text, /Content-Range: bytes 4-5\/20\r\n[\s\S]*\r\n45\r\n--/);
    assert.equal(Number(r.headers.get("content-length")), r.body.length);
    r = await raw(b, "GET", "/hello.txt", { range: "bytes=50-60" });
    assert.equal(r.status, 416);
    assert.equal(r.headers.get("content-range"), "bytes */20");
    r = await raw(b, "GET", "/hello.txt", { range: "bytes=2-5", "if-range": '"stale"' });
    assert.equal(r.status, 200, "If-Range mismatch serves the whole file");
    r = await raw(b, "GET", "/hello.txt", { range: "bytes=2-5", "if-range": etag });
    assert.equal(r.status, 206);
    r = await raw(b, "GET", "/big.bin", { range: "bytes=1000000-1000009" });
    assert.equal(r.status, 206);
    assert.deepEqual([...r.body], Array.from({ length: 10 }, (_, i) => (1000000 + i) % 251));
    r = await raw(b, "GET", "/big.bin");
    assert.equal(r.body.length, 1024 * 1024);
  } finally {
    await srv.stop();
    await s.cleanup();
  }
});

Deno.test("file_server: precompressed sidecars with order; browse HTML/JSON, sort, limit, reveal_symlinks", async () => {
  const s = await site();
  const srv = await serve([
    {
      match: [{ path: ["/r/*"] }],
      handle: [{ handler: "rewrite", strip_path_prefix: "/r" }, {
        handler: "file_server",
        root: s.root,
        index_names: ["none.html"],
        browse: { reveal_symlinks: true },
      }],
      terminal: true,
    },
    {
      handle: [{
        handler: "file_server",
        root: s.root,
        browse: {},
        index_names: ["none.html"],
        hide: [".env"],
        precompressed: { gzip: {}, zstd: {} },
        precompressed_order: ["zstd", "gzip"],
      }],
    },
  ]);
  try {
    const b = srv.url();
    let r = await raw(b, "GET", "/app.js", { "accept-encoding": "gzip" });
    assert.equal(r.headers.get("content-encoding"), "gzip");
    assert.equal(r.headers.get("content-type"), "text/javascript; charset=utf-8");
    assert.equal(r.headers.get("vary"), "Accept-Encoding");
    assert.equal(new TextDecoder().decode(zlib.gunzipSync(r.body)), "GZ");
    r = await raw(b, "GET", "/app.js", { "accept-encoding": "gzip, zstd" });
    assert.equal(r.headers.get("content-encoding"), "zstd");
    r = await raw(b, "GET", "/app.js", { "accept-encoding": "zstd;q=0.1, gzip" });
    assert.equal(r.headers.get("content-encoding"), "gzip");
    r = await raw(b, "GET", "/app.js");
    assert.equal(r.headers.get("content-encoding"), null);
    assert.ok(r.text.startsWith("console.log(1)"));

    r = await raw(b, "GET", "/docs");
    assert.equal(r.status, 308);
    assert.equal(r.headers.get("location"), "/docs/");
    r = await raw(b, "GET", "/docs/");
    assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8");
    assert.match(r.text, /href="\.\/bb\.txt"/);
    assert.match(r.text, /href="\.\/sub\/"/);
    r = await raw(b, "GET", "/empty/", { accept: "application/json" });
    assert.deepEqual(JSON.parse(r.text), []);
    r = await raw(b, "GET", "/docs/?sort=size&order=desc", { accept: "application/json" });
    const items = JSON.parse(r.text) as {
      name: string;
      size: number;
      url: string;
      is_dir: boolean;
      mod_time: string;
    }[];
    assert.deepEqual(items.map((i) => i.name), ["bb.txt", "a.md", "sub/"]);
    assert.equal(items[0].size, 10);
    assert.equal(items[0].url, "./bb.txt");
    assert.ok(!Number.isNaN(Date.parse(items[0].mod_time)));
    r = await raw(b, "GET", "/docs/?sort=name&limit=1&offset=1", { accept: "application/json" });
    assert.deepEqual(JSON.parse(r.text).map((i: { name: string }) => i.name), ["bb.txt"]);
    r = await raw(b, "GET", "/?sort=name", { accept: "application/json" });
    const root = JSON.parse(r.text) as {
      name: string;
      is_symlink: boolean;
      symlink_path?: string;
    }[];
    assert.ok(!root.some((i) => i.name === ".env"), "hidden files are not listed");
    const link = root.find((i) => i.name === "inside-link.txt")!;
    assert.equal(link.is_symlink, true);
    assert.equal(link.symlink_path, undefined, "targets only with reveal_symlinks");
    assert.ok(!root.some((i) => i.name.startsWith("escape-")), "links out of the root unlisted");
    r = await raw(b, "GET", "/r/?sort=name", { accept: "application/json" });
    const revealed = JSON.parse(r.text) as { name: string; symlink_path?: string }[];
    const target = `${s.root}/hello.txt`;
    assert.equal(revealed.find((i) => i.name === "inside-link.txt")!.symlink_path, target);
    r = await raw(b, "GET", "/r/");
    assert.ok(r.text.includes(target), "HTML listing shows targets with reveal_symlinks");
  } finally {
    await srv.stop();
    await s.cleanup();
  }
});

Deno.test("file_server: a file too large to keep in memory streams whole, by ranges to its end, suffixes, middles and multipart", async () => {
  const base = await Deno.makeTempDir({ prefix: "gatehouse-fs-large-" });
  // 3 MiB: above the 2 MiB a file may take in the cache, so every answer reads the disk
  const data = new Uint8Array(3 * 1024 * 1024 + 17);
  for (let i = 0; i < data.length; i++) data[i] = (i * 13) % 251;
  await Deno.writeFile(`${base}/large.bin`, data);
  const srv = await serve([{ handle: [{ handler: "file_server", root: base }] }]);
  const size = data.length;
  try {
    const b = srv.url();
    for (let i = 0; i < 2; i++) {
      const whole = await raw(b, "GET", "/large.bin");
      assert.equal(whole.status, 200);
      assert.equal(whole.headers.get("content-length"), String(size));
      assert.deepEqual(whole.body, data);
    }
    const cases: [string, number, number][] = [
      ["bytes=1048577-", 1048577, size],
      ["bytes=0-", 0, size],
      [`bytes=${size - 1}-`, size - 1, size],
      ["bytes=-70000", size - 70000, size],
      [`bytes=5-${size + 100}`, 5, size],
      ["bytes=2000000-2099999", 2000000, 2100000],
    ];
    for (const [range, from, to] of cases) {
      const r = await raw(b, "GET", "/large.bin", { range });
      assert.equal(r.status, 206, range);
      assert.equal(r.headers.get("content-range"), `bytes ${from}-${to - 1}/${size}`, range);
      assert.equal(r.headers.get("content-length"), String(to - from), range);
      assert.deepEqual(r.body, data.subarray(from, to), range);
    }
    // a multipart answer whose last part ends with the file stops each part at its end
    const m = await raw(b, "GET", "/large.bin", { range: `bytes=10-19,${size - 5}-` });
    assert.equal(m.status, 206);
    assert.equal(Number(m.headers.get("content-length")), m.body.length);
    // one character per byte (TextDecoder's "latin1" is windows-1252)
    const latin1 = (bytes: Uint8Array) => Array.from(bytes, (c) => String.fromCharCode(c)).join("");
    const text = latin1(m.body);
    const part = (from: number, to: number) => latin1(data.subarray(from, to));
    assert.ok(text.includes(`Content-Range: bytes 10-19/${size}\r\n\r\n${part(10, 20)}\r\n--`));
    assert.ok(
      text.includes(
        `Content-Range: bytes ${size - 5}-${size - 1}/${size}\r\n\r\n${part(size - 5, size)}\r\n--`,
      ),
    );
    const head = await raw(b, "HEAD", "/large.bin", { range: "bytes=100-" });
    assert.equal(head.status, 206);
    assert.equal(head.headers.get("content-length"), String(size - 100));
    assert.equal(head.body.length, 0);
  } finally {
    await srv.stop();
    await Deno.remove(base, { recursive: true });
  }
});
