/**
 * `file_server` fields from newer Caddy: browse `file_limit` and `sort`, and
 * `etag_file_extensions`; and `expression` matchers with a backquoted string and `file()`,
 * on a real server over loopback.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";

async function tree(): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "gatehouse-browse-" }));
  await Deno.mkdir(`${dir}/list`);
  await Deno.writeTextFile(`${dir}/list/a.txt`, "a".repeat(30));
  await Deno.writeTextFile(`${dir}/list/b.txt`, "b".repeat(10));
  await Deno.writeTextFile(`${dir}/list/c.txt`, "c".repeat(20));
  await Deno.writeTextFile(`${dir}/app.js`, "console.log(1)");
  await Deno.writeTextFile(`${dir}/app.js.etag`, '"sha-abc123"\n');
  await Deno.writeTextFile(`${dir}/plain.txt`, "plain");
  return dir;
}

Deno.test("browse: file_limit caps entries read, sort orders by default, the query wins", async () => {
  const root = await tree();
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ path: ["/limited/*"] }],
            handle: [
              { handler: "rewrite", strip_path_prefix: "/limited" },
              { handler: "file_server", root, browse: { file_limit: 2 } },
            ],
            terminal: true,
          },
          { handle: [{ handler: "file_server", root, browse: { sort: ["size", "desc"] } }] },
        ],
      },
    },
  });
  const names = async (target: string) => {
    const r = await raw(srv.url(), "GET", target, { accept: "application/json" });
    assert.equal(r.status, 200, target);
    return (JSON.parse(r.text) as { name: string }[]).map((i) => i.name);
  };
  try {
    assert.deepEqual(await names("/list/"), ["a.txt", "c.txt", "b.txt"], "size, descending");
    assert.deepEqual(await names("/list/?sort=name&order=asc"), ["a.txt", "b.txt", "c.txt"]);
    assert.deepEqual(await names("/list/?order=asc"), ["b.txt", "c.txt", "a.txt"], "size kept");
    assert.equal((await names("/limited/list/")).length, 2);
  } finally {
    await srv.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("file_server: etag_file_extensions takes the ETag from a sidecar file", async () => {
  const root = await tree();
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [{
          handle: [{ handler: "file_server", root, etag_file_extensions: [".sha", ".etag"] }],
        }],
      },
    },
  });
  try {
    for (let i = 0; i < 2; i++) {
      const r = await raw(srv.url(), "GET", "/app.js");
      assert.equal(r.headers.get("etag"), '"sha-abc123"');
      assert.equal(r.text, "console.log(1)");
    }
    const cond = await raw(srv.url(), "GET", "/app.js", { "if-none-match": '"sha-abc123"' });
    assert.equal(cond.status, 304);
    const plain = await raw(srv.url(), "GET", "/plain.txt");
    assert.match(plain.headers.get("etag")!, /^"[0-9a-z]+"$/, "no sidecar: the usual ETag");
    assert.notEqual(plain.headers.get("etag"), '"sha-abc123"');
  } finally {
    await srv.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("expression: backquoted strings and file()", async () => {
  const root = await tree();
  const srv = await startHttp({
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          {
            match: [{ expression: "{http.request.uri.path} == `/quoted`" }],
            handle: [{ handler: "static_response", body: "backquoted" }],
            terminal: true,
          },
          {
            match: [{
              expression: `file({'root': '${root}', 'try_files': ['{http.request.uri.path}.js']})`,
            }],
            handle: [{ handler: "static_response", body: "script {http.matchers.file.relative}" }],
            terminal: true,
          },
          { handle: [{ handler: "static_response", body: "none", status_code: 404 }] },
        ],
      },
    },
  });
  try {
    assert.equal((await raw(srv.url(), "GET", "/quoted")).text, "backquoted");
    assert.equal((await raw(srv.url(), "GET", "/app")).text, "script /app.js");
    assert.equal((await raw(srv.url(), "GET", "/nope")).status, 404);
  } finally {
    await srv.stop();
    await Deno.remove(root, { recursive: true });
  }
});
