/**
 * The `templates` directive in a real `gatehouse run` process: a Caddyfile with `root`,
 * `templates { mime ...; between ...; root ... }` and `file_server`, its answers the same as
 * Caddy 2.6.2's running the same Caddyfile (when installed); and `file-server --templates`.
 */
import assert from "node:assert/strict";
import { freePort, spawnCli, tempEnv, until } from "../../fixtures/helpers.ts";
import { up } from "../../fixtures/process.ts";
import { caddyInstalled, writeTree } from "./_oracle.ts";

const FILES: Record<string, string> = {
  "index.html": '<h1>[[ .Req.URL.Path ]]</h1> [[ include "part.html" "arg" ]] {{ not a template }}',
  "notes.txt": '[[ upper "plain" ]] [[ len .Args ]]',
  "doc.md": '[[ markdown "*md*" ]]',
  "partials/part.html": "<p>[[ index .Args 0 ]] from partials</p>",
};

function caddyfile(port: number, root: string, admin: string): string {
  return [
    "{",
    `\tadmin ${admin}`,
    "}",
    "",
    `http://127.0.0.1:${port} {`,
    `\troot * ${root}`,
    "\ttemplates {",
    "\t\tmime text/html text/plain",
    "\t\tbetween [[ ]]",
    `\t\troot ${root}/partials`,
    "\t}",
    "\tfile_server",
    "}",
    "",
  ].join("\n");
}

async function get(port: number, path: string): Promise<[number, string]> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`);
  return [r.status, await r.text()];
}

const PATHS = ["/", "/notes.txt", "/doc.md"];

Deno.test("templates: a Caddyfile's templates directive in a gatehouse process, as in Caddy 2.6.2", async () => {
  const t = await tempEnv();
  const root = await writeTree(FILES);
  const port = freePort();
  const admin = freePort();
  await Deno.writeTextFile(`${t.dir}/Caddyfile`, caddyfile(port, root, `127.0.0.1:${admin}`));
  const p = spawnCli(["run", "--config", `${t.dir}/Caddyfile`], t.env, t.dir);
  const ours: [number, string][] = [];
  try {
    await up(`http://127.0.0.1:${admin}`);
    await until(async () => (await get(port, "/"))[0] === 200, 15000, "site");
    for (const path of PATHS) ours.push(await get(port, path));
  } finally {
    await fetch(`http://127.0.0.1:${admin}/stop`, { method: "POST" }).then((r) => r.body?.cancel())
      .catch(() => {});
    await p.status;
  }
  assert.deepEqual(ours, [
    [200, "<h1>/</h1> <p>arg from partials</p> {{ not a template }}"],
    [200, "PLAIN 0"],
    // text/markdown is not in the mime list: served as it is
    [200, '[[ markdown "*md*" ]]'],
  ]);
  if (caddyInstalled()) {
    const cport = freePort();
    const cdir = await Deno.makeTempDir({ prefix: "gatehouse-tpl-caddyfile-" });
    await Deno.writeTextFile(`${cdir}/Caddyfile`, caddyfile(cport, root, "off"));
    const caddy = new Deno.Command("caddy", {
      args: ["run", "--config", `${cdir}/Caddyfile`, "--adapter", "caddyfile"],
      stdout: "null",
      stderr: "null",
      env: { HOME: cdir, XDG_DATA_HOME: cdir, XDG_CONFIG_HOME: cdir },
    }).spawn();
    try {
      await until(async () => (await get(cport, "/"))[0] === 200, 15000, "caddy");
      const theirs: [number, string][] = [];
      for (const path of PATHS) theirs.push(await get(cport, path));
      assert.deepEqual(ours, theirs);
    } finally {
      caddy.kill("SIGTERM");
      await caddy.status;
      await Deno.remove(cdir, { recursive: true });
    }
  }
  await Deno.remove(root, { recursive: true });
  await Deno.remove(t.dir, { recursive: true });
});

Deno.test("templates: file-server --templates renders the root's files", async () => {
  const t = await tempEnv();
  const root = await writeTree({
    "index.html": '{{ upper "rendered" }} {{ include "inc.txt" }}',
    "inc.txt": "inc",
  });
  const port = freePort();
  const p = spawnCli(
    [
      "file-server",
      "--templates",
      "--no-compress",
      "--listen",
      `127.0.0.1:${port}`,
      "--root",
      root,
    ],
    t.env,
    t.dir,
  );
  try {
    await until(async () => (await get(port, "/"))[0] === 200, 15000, "file-server");
    assert.deepEqual(await get(port, "/"), [200, "RENDERED inc"]);
  } finally {
    p.child.kill("SIGTERM");
    await p.status;
    await Deno.remove(root, { recursive: true });
    await Deno.remove(t.dir, { recursive: true });
  }
});
