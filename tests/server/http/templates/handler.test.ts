/**
 * The `templates` handler around `file_server`, side by side with Caddy 2.6.2: which answers
 * are rendered (`mime_types`), the header fields of a rendered answer (Content-Length of the
 * result; ETag, Last-Modified and Accept-Ranges gone), HEAD, 304 and ranges, `delimiters`,
 * `file_root`, `.RespHeader`, `httpError`; and the config checks (`delimiters` of one
 * element, `match` extensions, which no module provides here).
 */
import assert from "node:assert/strict";
import { validateConfig } from "../../../../lib/cli/validate.ts";
import {
  type Answer,
  type Ask,
  askCaddy,
  askGatehouse,
  caddyInstalled,
  routes,
  writeTree,
} from "./_oracle.ts";

const FILES: Record<string, string> = {
  "page.html": 'Hi {{.Req.Method}} {{include "part.txt"}}',
  "part.txt": "[{{1}}]",
  "style.css": 'body { content: "{{not rendered}}" }',
  "note.md": '# {{upper "md"}}',
  "brackets.css": 'a { b: [[ upper "css" ]]; c: {{kept}} }',
  "headers.html": '{{.RespHeader.Set "X-Made" "by-template"}}{{.RespHeader.Del "Content-Type"}}ok',
  "teapot.html": "{{httpError 418}}",
  "broken.html": "{{.Nope}}",
  "sub/inc.html": '{{include "page.html"}}',
};

const LATER = "Fri, 01 Jan 2100 00:00:00 GMT";

/** The header fields compared (their presence, and their value where it is not per server). */
const COMPARED = ["content-type", "content-length", "x-made"];
const PRESENT = ["etag", "last-modified", "accept-ranges"];

function summary(a: Answer): Record<string, unknown> {
  // Caddy 2.6.2 answers a failed template or an `httpError` with the file's header fields
  // (its Content-Length too) and no body; current Caddy deletes them for `httpError`
  // (tplcontext.go funcHTTPError, "templates: Delete headers on `httpError` to reset to clean
  // slate", #5905), and Gatehouse answers both with the error's own answer: only the status
  // is compared then
  if (a.status >= 400) return { status: a.status };
  const h: Record<string, unknown> = { status: a.status, body: a.body };
  for (const k of COMPARED) h[k] = a.headers.get(k);
  for (const k of PRESENT) h[k] = a.headers.has(k);
  return h;
}

const ASKS: Ask[] = [
  { path: "/page.html" },
  { path: "/page.html", method: "HEAD" },
  { path: "/page.html", headers: { "If-Modified-Since": LATER } },
  { path: "/page.html", headers: { Range: "bytes=0-5" } },
  { path: "/style.css" },
  { path: "/note.md" },
  { path: "/headers.html" },
  { path: "/teapot.html" },
  { path: "/broken.html" },
  { path: "/sub/inc.html" },
];

Deno.test({
  name: "templates: rendered answers and their header fields as Caddy 2.6.2's",
  ignore: !caddyInstalled(),
  async fn() {
    const root = await writeTree(FILES);
    try {
      const r = routes(root);
      const [caddy, ours] = await Promise.all([askCaddy(root, r, ASKS), askGatehouse(r, ASKS)]);
      ASKS.forEach((a, i) => {
        assert.deepEqual(summary(ours[i]), summary(caddy[i]), `${a.method ?? "GET"} ${a.path}`);
      });
      // what the comparison covers
      assert.equal(ours[0].body, "Hi GET [1]");
      assert.equal(ours[0].headers.get("content-length"), "10");
      assert.equal(ours[0].headers.has("etag"), false);
      assert.equal(ours[2].status, 304);
      assert.equal(
        ours[4].headers.has("etag"),
        true,
        "an answer that is not rendered keeps its ETag",
      );
      assert.equal(ours[6].headers.get("x-made"), "by-template");
      assert.equal(ours[7].status, 418);
      assert.equal(ours[8].status, 500);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test({
  name: "templates: mime_types and delimiters choose what renders and how, as Caddy 2.6.2",
  ignore: !caddyInstalled(),
  async fn() {
    const root = await writeTree(FILES);
    try {
      const r = routes(root, { mime_types: ["text/css"], delimiters: ["[[", "]]"] });
      const asks: Ask[] = [{ path: "/brackets.css" }, { path: "/page.html" }, {
        path: "/style.css",
      }];
      const [caddy, ours] = await Promise.all([askCaddy(root, r, asks), askGatehouse(r, asks)]);
      asks.forEach((a, i) => assert.deepEqual(summary(ours[i]), summary(caddy[i]), a.path));
      assert.equal(ours[0].body, "a { b: CSS; c: {{kept}} }");
      assert.equal(ours[1].body, FILES["page.html"], "text/html is not in mime_types: untouched");
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  },
});

Deno.test("templates: file_root is where include reads; placeholders in it are replaced", async () => {
  const root = await writeTree(FILES);
  const other = await writeTree({ "part.txt": "from the other root" });
  try {
    const r = [{
      handle: [
        { handler: "vars", other },
        { handler: "templates", file_root: "{http.vars.other}" },
        { handler: "file_server", root },
      ],
    }];
    const [page] = await askGatehouse(r, [{ path: "/page.html" }]);
    assert.equal(page.body, "Hi GET from the other root");
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(other, { recursive: true });
  }
});

Deno.test("templates: a config with extensions (match) or one delimiter is refused with its reason", async () => {
  const config = (t: Record<string, unknown>) => ({
    admin: { disabled: true },
    apps: {
      http: {
        servers: {
          s: { listen: ["127.0.0.1:0"], routes: [{ handle: [{ handler: "templates", ...t }] }] },
        },
      },
    },
  });
  await assert.rejects(
    validateConfig(config({ match: { mine: {} } })),
    /http\.handlers\.templates\.match: loading template extensions: module not registered: http\.handlers\.templates\.functions\.mine/,
  );
  await assert.rejects(
    validateConfig(config({ delimiters: ["<<"] })),
    /delimiters must consist of exactly two elements: opening and closing/,
  );
  await assert.rejects(validateConfig(config({ file_root: 5 })), /file_root/);
  await validateConfig(config({ match: {}, delimiters: ["<<", ">>"], mime_types: ["text/x"] }));
});
