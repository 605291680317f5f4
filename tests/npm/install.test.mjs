// What `npm install` of the npm mirror brings, the way an app gets it: `npm pack` of the mirror,
// then `npm install` of that tarball in a fresh directory outside the repository, alone or with
// the packages of one part (README, "Install"). The mirror alone installs nothing else, and the
// core and the database flows on a D1 binding run with it; a part whose package is missing says
// which package to add. (The web server runs on Deno: `tests/server/plugins/` installs it from
// the mirror the way `gatehouse install` does.) The sizes of each install are printed and
// compared with README's table ("Install"): the package counts exactly, the megabytes within
// ±15% (what npm resolves for a peer range moves with the releases of that package; a figure
// further off than that is out of date: write the measured one in README). Build first:
// deno task build:npm. Run: node --test tests/npm/
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const mirror = fileURLToPath(new URL("../../npm/", import.meta.url));
const PEERS = JSON.parse(readFileSync(join(mirror, "package.json"), "utf8")).peerDependencies;
const work = mkdtempSync(join(tmpdir(), "gatehouse-npm-install-"));
execFileSync("npm", ["pack", "--silent", "--pack-destination", work], {
  cwd: mirror,
  stdio: "ignore",
});
const tarball = join(work, readdirSync(work).find((f) => f.endsWith(".tgz")));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));

/** What each install brought (name as in the tests below → `weight`), for README's table. */
const measured = {};

/** How far README's megabytes may be from the measured ones (a fraction of the measured). */
const SIZE_TOLERANCE = 0.15;

/** README's rows (the "Part" column) and the install each one states. */
const README_ROWS = {
  "core (`@gatehouse/gatehouse`)": "mirror alone",
  "`./d1` on a Cloudflare D1 binding": "mirror alone",
  "`./d1` with `openLibsql` (libSQL)": "./d1 with libSQL",
  "`./d1` TOTP QR codes (`totpQrSvg`)": "./d1 QR codes",
  "`./d1` passkeys": "./d1 passkeys",
  "`./preact`": "./preact",
  "`./react`": "./react",
  "`./mail` (client and server)": "./mail",
  "`./admin`, `./cli` (the web server)": "./admin, ./cli (every server feature)",
};

/** README's install table: part → { packages, mb } as written ("16 packages, 29.1 MB"). */
function readmeTable() {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const lines = readme.split("\n");
  const head = lines.findIndex((l) => l.startsWith("| Part ") && l.includes("(measured)"));
  assert.ok(head >= 0, "README has the install table");
  const rows = {};
  for (const line of lines.slice(head + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    const m = cells[2].match(/^(\d+) packages?, (\d+(?:\.\d+)?) MB$/);
    assert.ok(m, `README's row ${cells[0]}: "${cells[2]}" is not "N packages, X MB"`);
    rows[cells[0]] = { packages: Number(m[1]), mb: Number(m[2]) };
  }
  return rows;
}

/** The peers of the server's features, as README's server install line lists them. */
const SERVER = Object.keys(PEERS).filter((n) =>
  !["react", "preact", "preact-render-to-string"].includes(n)
);

/** A fresh app directory with the tarball and `packages` (names; ranges from the mirror). */
function install(name, packages = []) {
  const dir = join(work, name);
  execFileSync("mkdir", ["-p", dir]);
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ name: "app", private: true, type: "module" }),
  );
  execFileSync("npm", [
    "install",
    "--no-audit",
    "--no-fund",
    "--no-package-lock",
    tarball,
    ...packages.map((p) => `${p}@${PEERS[p]}`),
  ], { cwd: dir, stdio: "ignore" });
  return dir;
}

/** Installed packages (each package.json under node_modules) and their bytes on disk. */
function weight(dir) {
  let packages = 0;
  let bytes = 0;
  const walk = (path, top) => {
    for (const e of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, e.name);
      if (e.isDirectory()) walk(full, false);
      else {
        bytes += statSync(full).size;
        if (e.name === "package.json" && !top && isPackageRoot(full)) packages++;
      }
    }
  };
  walk(join(dir, "node_modules"), true);
  return { packages, mb: Math.round(bytes / 1e5) / 10 };
}

/** A package.json that is a package's own (in node_modules/<name>/ or node_modules/@s/<name>/). */
function isPackageRoot(file) {
  return /node_modules\/(@[^/]+\/)?[^/@]+\/package\.json$/.test(file);
}

/** Runs an ES module in the app directory; returns its stdout, or throws with its stderr. */
function node(dir, code) {
  writeFileSync(join(dir, "probe.mjs"), code);
  return execFileSync("node", ["probe.mjs"], { cwd: dir, encoding: "utf8", stdio: "pipe" });
}

function nodeFails(dir, code) {
  writeFileSync(join(dir, "probe.mjs"), code);
  try {
    execFileSync("node", ["probe.mjs"], { cwd: dir, encoding: "utf8", stdio: "pipe" });
  } catch (e) {
    return String(e.stderr);
  }
  assert.fail("the probe was expected to fail");
}

test("npm install of the mirror alone installs it and nothing else; the core and the D1 flows run", () => {
  const dir = install("core");
  assert.deepEqual(readdirSync(join(dir, "node_modules")).filter((n) => !n.startsWith(".")), [
    "@gatehouse",
  ]);
  assert.deepEqual(readdirSync(join(dir, "node_modules/@gatehouse")), ["gatehouse"]);
  measured["mirror alone"] = weight(dir);
  console.log(`mirror alone: ${JSON.stringify(measured["mirror alone"])}`);
  assert.equal(
    node(
      dir,
      `import { hashPassword, verifyPassword } from "@gatehouse/gatehouse";
const h = await hashPassword("correct horse battery staple");
console.log(await verifyPassword("correct horse battery staple", h));`,
    ),
    "true\n",
  );
  // ./d1 loads @libsql/client in openLibsql only: the flows take any D1-shaped binding
  assert.equal(
    node(
      dir,
      `import * as d1 from "@gatehouse/gatehouse/d1";
console.log(typeof d1.signup, typeof d1.applySchema);`,
    ),
    "function function\n",
  );
});

test("a part whose npm package is missing names the package to add", () => {
  const dir = join(work, "core");
  const libsql = nodeFails(
    dir,
    `import { openLibsql } from "@gatehouse/gatehouse/d1";
const db = openLibsql(":memory:");
await db.prepare("select 1").first();`,
  );
  assert.ok(
    libsql.includes(
      "@gatehouse/gatehouse: this feature needs the npm package @libsql/client, an optional " +
        `peer dependency that is not installed. Install it beside @gatehouse/gatehouse: npm install @libsql/client@"${
          PEERS["@libsql/client"]
        }"`,
    ),
    libsql,
  );
  // ./d1 runs without lean-qr; only its QR codes need it
  const qr = nodeFails(
    dir,
    `import { totpQrSvg } from "@gatehouse/gatehouse/d1";
totpQrSvg("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP");`,
  );
  assert.ok(
    qr.includes(
      "@gatehouse/gatehouse: this feature needs the npm package lean-qr, an optional peer " +
        `dependency that is not installed. Install it beside @gatehouse/gatehouse: npm install lean-qr@"${
          PEERS["lean-qr"]
        }"`,
    ),
    qr,
  );
  // and its passkeys need @simplewebauthn/server, named when the first ceremony loads it
  const passkeys = nodeFails(
    dir,
    `import { passkeyRegistrationOptions } from "@gatehouse/gatehouse/d1";
await passkeyRegistrationOptions({}, { userId: "u" });`,
  );
  assert.ok(
    passkeys.includes(
      "this feature needs the npm package @simplewebauthn/server, an optional peer dependency",
    ),
    passkeys,
  );
  // a static import: Node's own error names the package
  const mail = nodeFails(dir, `import "@gatehouse/gatehouse/mail";`);
  assert.match(mail, /Cannot find package 'hono'/);
});

test("each part's packages come with it only when added beside the mirror", () => {
  const sizes = {};
  for (
    const [part, packages, probe] of [
      [
        "./d1 with libSQL",
        ["@libsql/client"],
        `import { openLibsql } from "@gatehouse/gatehouse/d1";
const db = openLibsql(":memory:");
console.log(JSON.stringify(await db.prepare("select 1 as one").first()));`,
      ],
      [
        "./d1 QR codes",
        ["lean-qr"],
        `import { totpQrSvg } from "@gatehouse/gatehouse/d1";
console.log(totpQrSvg("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP").startsWith("<svg"));`,
      ],
      [
        "./d1 passkeys",
        ["@simplewebauthn/server"],
        `import { passkeySignInOptions } from "@gatehouse/gatehouse/d1";
const db = { prepare() { throw new Error("no database here"); } };
const rp = { id: "example.com", name: "Example", origin: "https://example.com" };
const r = await passkeySignInOptions(db, { rp });
console.log(typeof r.ok === "boolean");`,
      ],
      [
        "./mail",
        ["hono", "@libsql/client"],
        `import { createMailServer } from "@gatehouse/gatehouse/mail";
console.log(typeof createMailServer);`,
      ],
      [
        "./preact",
        ["preact", "preact-render-to-string"],
        `import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { LoginPage } from "@gatehouse/gatehouse/preact";
console.log(renderToString(h(LoginPage, {})).includes('<form method="post"'));`,
      ],
      [
        "./react",
        ["react"],
        `import { LoginPage } from "@gatehouse/gatehouse/react";
console.log(typeof LoginPage);`,
      ],
      [
        "./admin, ./cli (every server feature)",
        SERVER,
        `import { startServer } from "@gatehouse/gatehouse/admin";
console.log(typeof startServer);`,
      ],
    ]
  ) {
    const dir = install(part.replace(/\W+/g, "-"), packages);
    assert.match(node(dir, probe), /^(\{"one":1\}|function|true)\n$/, part);
    const installed = readdirSync(join(dir, "node_modules")).filter((n) => !n.startsWith("."));
    for (const p of packages) assert.ok(installed.includes(p.split("/")[0]), `${part}: ${p}`);
    sizes[part] = measured[part] = weight(dir);
  }
  // react-dom is not among them: the React build imports react alone
  console.log(`install sizes: ${JSON.stringify(sizes)}`);
});

test("README's install table says what npm install brings, as measured above", () => {
  const table = readmeTable();
  assert.deepEqual(Object.keys(table).sort(), Object.keys(README_ROWS).sort());
  const wrong = [];
  for (const [row, part] of Object.entries(README_ROWS)) {
    const got = measured[part];
    assert.ok(got, `${part} was not measured (an install above failed)`);
    const said = table[row];
    const off = Math.abs(said.mb - got.mb) / got.mb;
    if (said.packages !== got.packages || off > SIZE_TOLERANCE) {
      wrong.push(
        `${row}: README says ${said.packages} packages, ${said.mb} MB; measured ` +
          `${got.packages} packages, ${got.mb} MB`,
      );
    }
  }
  assert.deepEqual(wrong, [], "update README's install table");
});
