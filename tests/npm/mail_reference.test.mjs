// The mail API's interactive reference from the npm mirror, installed the way a Node app gets
// it: `npm pack` of the mirror, `npm install` of that tarball with the packages `./mail` needs
// (`hono`, `@libsql/client`, README "Install") in a fresh directory outside the repository (nothing of the repository's node_modules is reachable from there), and the mail
// server started from that install by its package name. The page and both of its scripts are
// served (the renderer is the gzip-compressed bundle the mirror carries, sent as it is to a
// client that accepts gzip); without that bundle the script answers 503 saying it is missing. Build first: deno task build:npm. Run: node --test tests/npm/
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { get as httpGet } from "node:http";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const mirror = fileURLToPath(new URL("../../npm/", import.meta.url));
const serveHelper = new URL("./_serve.mjs", import.meta.url).href;
const PEERS = JSON.parse(readFileSync(join(mirror, "package.json"), "utf8")).peerDependencies;

// Runs in the app directory: the mail server of the installed package on a libSQL temp file.
const SERVER = `
import { createClient } from "@libsql/client";
import { createMailServer } from "@gatehouse/gatehouse/mail";
import { serve } from ${JSON.stringify(serveHelper)};
const client = createClient({ url: "file:" + process.argv[2] + "/mail.db" });
const mail = await createMailServer({ client, blobDir: process.argv[2] + "/blobs" });
const http = await serve(mail.fetch);
process.stdout.write(http.url + "\\n");
process.on("SIGTERM", async () => {
  await mail.close();
  await http.close();
  client.close();
  process.exit(0);
});
`;

/** Starts the installed package's mail server; resolves once it printed its URL. */
function startServer(dir) {
  const child = spawn("node", ["server.mjs", dir], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const url = new Promise((resolve, reject) => {
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/^(http:\/\/127\.0\.0\.1:\d+)\n/);
      if (m) resolve(m[1]);
    });
    exited.then((code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  return {
    url,
    stderr: () => err,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

test("mail mirror: the packed tarball, installed with hono and @libsql/client, serves the reference page and its scripts", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-mail-reference-"));
  try {
    execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
      cwd: mirror,
      stdio: "ignore",
    });
    const tarball = join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz")));
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "app", private: true, type: "module" }),
    );
    execFileSync("npm", [
      "install",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
      "--ignore-scripts",
      tarball,
      ...["hono", "@libsql/client"].map((name) => `${name}@${PEERS[name]}`),
    ], { cwd: dir, stdio: "ignore" });
    writeFileSync(join(dir, "server.mjs"), SERVER);
    const installed = join(dir, "node_modules/@gatehouse/gatehouse");
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    // the renderer is carried as a file, not installed as a package
    assert.ok(!("@scalar/api-reference" in (pkg.dependencies ?? {})));
    assert.ok(!readdirSync(join(dir, "node_modules")).includes("@scalar"));
    assert.match(
      readFileSync(join(installed, "lib/mail/scalar/LICENSE"), "utf8"),
      /@scalar\/api-reference\s+\d+\.\d+\.\d+[\s\S]*MIT License/,
    );

    const server = startServer(dir);
    try {
      const base = `${await server.url}/api/account-docs/v2`;
      const page = await fetch(`${base}/docs`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get("content-type"), /^text\/html/);
      const html = await page.text();
      const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
      assert.deepEqual(scripts, [
        "/api/account-docs/v2/docs/assets/reference.js",
        "/api/account-docs/v2/docs/assets/init.js",
      ]);
      const bodies = {};
      for (const src of scripts) {
        const r = await fetch(new URL(src, base));
        assert.equal(r.status, 200, src);
        assert.match(r.headers.get("content-type"), /^text\/javascript/, src);
        bodies[src.split("/").pop()] = await r.text();
      }
      // the renderer is Scalar's standalone bundle (it defines the global the page starts)
      assert.ok(bodies["reference.js"].length > 1_000_000, "the whole bundle");
      assert.ok(bodies["reference.js"].includes("createApiReference"));
      assert.match(bodies["init.js"], /Scalar\.createApiReference\("#app"/);
      const doc = await (await fetch(`${base}/openapi.json`)).json();
      assert.equal(doc.openapi, "3.1.0");
      // sent compressed as stored, to a client that accepts gzip
      const raw = await new Promise((resolve, reject) => {
        server.url.then((origin) => {
          const req = httpGet(`${origin}/api/account-docs/v2/docs/assets/reference.js`, {
            headers: { "accept-encoding": "gzip" },
          }, (res) => {
            const chunks = [];
            res.on("data", (c) => chunks.push(c));
            res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          });
          req.on("error", reject);
        });
      });
      assert.equal(raw.headers["content-encoding"], "gzip");
      assert.deepEqual(raw.body, readFileSync(join(installed, "lib/mail/scalar/standalone.js.gz")));
    } finally {
      await server.stop();
    }

    // without the carried bundle the script answers 503 saying it is missing
    rmSync(join(installed, "lib/mail/scalar/standalone.js.gz"));
    const bare = startServer(dir);
    try {
      const base = `${await bare.url}/api/account-docs/v2`;
      const r = await fetch(`${base}/docs/assets/reference.js`);
      assert.equal(r.status, 503);
      const text = await r.text();
      assert.match(text, /The API reference renderer is missing from this installation/);
      assert.match(text, /\/api\/account-docs\/v2\/openapi\.json/);
      assert.equal((await fetch(`${base}/docs/assets/init.js`)).status, 200);
    } finally {
      await bare.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
