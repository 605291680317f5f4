/**
 * `file_server` directory listings against a real `gatehouse run` process: a listing shows only
 * what the server would serve. A symlink whose target lies outside the root is 404 when asked
 * for, and before it was still listed with its target's size, time and kind (any file the
 * server may `stat`, e.g. a link to `/etc/passwd` dropped in a shared upload directory).
 * Names that are markup are escaped in the HTML listing and percent-encoded in links.
 */
import assert from "node:assert/strict";
import { startGatehouse } from "../server/http/hostile.ts";

async function get(port: number, path: string, accept = "text/html") {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { accept } });
  return { status: r.status, text: await r.text() };
}

Deno.test("file_server browse: links out of the root are neither served nor listed; names escaped", async () => {
  const base = await Deno.makeTempDir({ prefix: "gatehouse-browse-" });
  const root = `${base}/root`;
  await Deno.mkdir(`${root}/sub`, { recursive: true });
  await Deno.mkdir(`${base}/outside-dir`);
  // a distinctive size and time, to be sure they never show up
  await Deno.writeTextFile(`${base}/outside.bin`, "s".repeat(31337));
  await Deno.utime(`${base}/outside.bin`, 0, new Date("2001-02-03T04:05:06Z"));
  await Deno.writeTextFile(`${root}/inside.txt`, "in");
  await Deno.symlink(`${base}/outside.bin`, `${root}/out-link`);
  await Deno.symlink(`${base}/outside-dir`, `${root}/out-dir`);
  await Deno.symlink(`${root}/sub/../../outside.bin`, `${root}/dotdot-link`);
  await Deno.symlink(`${root}/inside.txt`, `${root}/in-link`);
  await Deno.symlink(`../inside.txt`, `${root}/sub/up-link`);
  const xss = `<img src=x onerror=alert(1)>"'&`;
  await Deno.writeTextFile(`${root}/${xss}`, "x");
  const g = await startGatehouse({
    site: {
      routes: [{
        handle: [
          { handler: "file_server", root, browse: { reveal_symlinks: true } },
        ],
      }],
    },
  });
  try {
    const port = g.ports.site;
    for (const p of ["/out-link", "/out-dir/", "/dotdot-link"]) {
      assert.equal((await get(port, p)).status, 404, `${p} is not served`);
    }
    assert.equal((await get(port, "/in-link")).text, "in", "a link inside the root is served");

    const json = await get(port, "/", "application/json");
    assert.equal(json.status, 200);
    const names = (JSON.parse(json.text) as { name: string }[]).map((i) => i.name).sort();
    assert.deepEqual(names, [xss, "in-link", "inside.txt", "sub/"].sort());
    assert.ok(!json.text.includes("31337") && !json.text.includes("2001-02-03"), json.text);
    const sub = await get(port, "/sub/", "application/json");
    assert.deepEqual((JSON.parse(sub.text) as { name: string }[]).map((i) => i.name), [
      "up-link",
    ]);

    const html = await get(port, "/");
    assert.equal(html.status, 200);
    for (const leak of ["out-link", "out-dir", "dotdot-link", "outside", "31337", "2001-02-03"]) {
      assert.ok(!html.text.includes(leak), `the HTML listing shows nothing of ${leak}`);
    }
    assert.ok(!html.text.includes("<img"), "a name is never markup");
    assert.ok(html.text.includes("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;"));
    assert.ok(
      html.text.includes(`href="./%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E%22'%26"`) ||
        html.text.includes(`href="./%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E%22&#39;%26"`),
    );
  } finally {
    await g.stop();
    await Deno.remove(base, { recursive: true });
  }
});
