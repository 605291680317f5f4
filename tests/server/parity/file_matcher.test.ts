/**
 * The `file` matcher and `try_files`: the single-page-app fallback, the placeholders a match
 * sets, split_path, globs, try policies and `=<status>` entries, each on a real server over
 * loopback and, where Caddy 2.6.2 has the feature, side by side with Caddy.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { raw } from "../http/raw.ts";
import { caddyInstalled, startCaddy } from "./oracle.ts";

async function site(): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "gatehouse-spa-" }));
  await Deno.writeTextFile(`${dir}/index.html`, "<h1>app shell</h1>\n");
  await Deno.writeTextFile(`${dir}/app.js`, "console.log('app');\n");
  await Deno.mkdir(`${dir}/assets`);
  await Deno.writeTextFile(`${dir}/assets/logo.svg`, "<svg/>");
  await Deno.writeTextFile(`${dir}/assets/big.svg`, "<svg>" + "x".repeat(100) + "</svg>");
  await Deno.mkdir(`${dir}/docs`);
  await Deno.writeTextFile(`${dir}/docs/index.html`, "docs index\n");
  await Deno.writeTextFile(`${dir}/index.php`, "<?php echo 1;");
  await Deno.writeTextFile(`${dir}/a*b.txt`, "star file");
  await Deno.utime(`${dir}/assets/logo.svg`, new Date(2030, 0, 1), new Date(2030, 0, 1));
  await Deno.utime(`${dir}/assets/big.svg`, new Date(2020, 0, 1), new Date(2020, 0, 1));
  return dir;
}

const SHOW = "rel={http.matchers.file.relative} abs={http.matchers.file.absolute} " +
  "type={http.matchers.file.type} rem={http.matchers.file.remainder}";

function config(root: string, newer = true): Record<string, unknown> {
  const show = (match: Record<string, unknown>, prefix: string) => ({
    match: [{ path: [`${prefix}/*`] }],
    handle: [
      { handler: "rewrite", strip_path_prefix: prefix },
      {
        handler: "subroute",
        routes: [
          {
            match: [{ file: { root, ...(match.file as Record<string, unknown>) } }],
            handle: [{ handler: "static_response", body: SHOW }],
            terminal: true,
          },
          { handle: [{ handler: "static_response", body: "no file", status_code: 404 }] },
        ],
      },
    ],
    terminal: true,
  });
  return {
    servers: {
      srv0: {
        listen: ["127.0.0.1:0"],
        routes: [
          show({ file: { split_path: [".php"] } }, "/split"),
          show({ file: { try_files: ["/assets/*.svg"] } }, "/glob"),
          show({ file: { try_files: ["{http.request.uri.path}"] } }, "/escaped"),
          show({ file: { try_files: ["/assets/*.svg"], try_policy: "largest_size" } }, "/large"),
          show({ file: { try_files: ["/assets/*.svg"], try_policy: "smallest_size" } }, "/small"),
          show(
            { file: { try_files: ["{http.request.uri.path}", "=403", "/index.html"] } },
            "/status",
          ),
          show({
            file: { try_files: ["/assets/*.svg"], try_policy: "most_recently_modified" },
          }, "/recent"),
          ...(newer
            ? [
              show({
                file: {
                  try_files: ["{http.request.uri.path}", "/docs"],
                  try_policy: "first_exist_fallback",
                },
              }, "/fallback"),
            ]
            : []),
          // the single-page app: what `try_files {path} {path}/ /index.html` becomes
          {
            match: [{
              file: {
                root,
                try_files: ["{http.request.uri.path}", "{http.request.uri.path}/", "/index.html"],
              },
            }],
            handle: [{ handler: "rewrite", uri: "{http.matchers.file.relative}" }],
          },
          { handle: [{ handler: "file_server", root }] },
        ],
      },
    },
  };
}

/** [target, expected status, expected body (exact, or a RegExp)] */
function cases(root: string): [string, number, string | RegExp][] {
  return [
    ["/", 200, "<h1>app shell</h1>\n"],
    ["/app.js", 200, "console.log('app');\n"],
    ["/some/client/route", 200, "<h1>app shell</h1>\n"],
    ["/deep/link?x=1", 200, "<h1>app shell</h1>\n"],
    ["/assets/logo.svg", 200, "<svg/>"],
    ["/docs/", 200, "docs index\n"],
    [
      "/split/index.php/foo/bar",
      200,
      `rel=/index.php abs=${root}/index.php type=file rem=/foo/bar`,
    ],
    ["/split/INDEX.PHP", 404, "no file"],
    ["/split/docs/", 404, "no file"],
    ["/glob/anything", 200, `rel=/assets/big.svg abs=${root}/assets/big.svg type=file rem=`],
    ["/escaped/a*b.txt", 200, `rel=/a*b.txt abs=${root}/a*b.txt type=file rem=`],
    ["/escaped/a*", 404, "no file"],
    ["/escaped/app.j?", 404, "no file"],
    ["/large/x", 200, `rel=/assets/big.svg abs=${root}/assets/big.svg type=file rem=`],
    ["/small/x", 200, `rel=/assets/logo.svg abs=${root}/assets/logo.svg type=file rem=`],
    ["/status/app.js", 200, `rel=/app.js abs=${root}/app.js type=file rem=`],
    ["/status/missing", 403, ""],
    ["/recent/x", 200, `rel=/assets/logo.svg abs=${root}/assets/logo.svg type=file rem=`],
  ];
}

/** Newer than Caddy 2.6.2: checked on Gatehouse only. */
function newerCases(root: string): [string, number, string][] {
  return [
    // the last entry is taken as it is, without the file/directory check
    ["/fallback/missing", 200, `rel=/docs abs=${root}/docs type=file rem=`],
    ["/fallback/app.js", 200, `rel=/app.js abs=${root}/app.js type=file rem=`],
  ];
}

Deno.test("file matcher: try_files SPA fallback, placeholders, split_path, globs, policies", async () => {
  const root = await site();
  const srv = await startHttp(config(root));
  try {
    for (const [target, status, body] of [...cases(root), ...newerCases(root)]) {
      const r = await raw(srv.url(), "GET", target);
      assert.equal(r.status, status, `${target}: status`);
      if (body instanceof RegExp) assert.match(r.text, body, target);
      else assert.equal(r.text, body, `${target}: body`);
    }
  } finally {
    await srv.stop();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test({
  name: "file matcher: the same answers as Caddy 2.6.2",
  ignore: !caddyInstalled(),
  async fn() {
    const root = await site();
    const cfg = config(root, false);
    const srv = await startHttp(cfg);
    const caddy = await startCaddy(cfg);
    try {
      for (const [target] of cases(root)) {
        const c = await raw(caddy.url, "GET", target);
        const g = await raw(srv.url(), "GET", target);
        assert.equal(
          g.status,
          c.status,
          `${target}: status gatehouse=${g.status} caddy=${c.status}`,
        );
        assert.equal(g.text, c.text, `${target}: body`);
        assert.equal(g.headers.get("content-type"), c.headers.get("content-type"), target);
      }
    } finally {
      await caddy.stop();
      await srv.stop();
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("file matcher: refuses unknown policies, fields and file systems by name", async () => {
  const { fileMatcher } = await import("../../../lib/server/http/matchers/file.ts");
  assert.throws(() => fileMatcher({ try_policy: "random" }), /unknown try policy random/);
  assert.throws(() => fileMatcher({ try_file: [] }), /unknown field "try_file"/);
  assert.throws(() => fileMatcher({ fs: "embedded" }), /file system "embedded" is not available/);
});
