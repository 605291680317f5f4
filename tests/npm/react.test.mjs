// The npm mirror's `./react` and `./preact` in Node 20. The React build is installed the way a
// React app gets it: `npm pack` of the mirror, then `npm install` of that tarball beside
// React 18 or React 19 in a fresh directory, imported by its package name and rendered with
// that directory's own `react-dom/server`. Build first: deno task build:npm.
// Run: node --test tests/npm/
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { authPageElement, describeError, renderAuthDocument } from "../../npm/preact.js";
import { renderToString } from "../../npm/node_modules/preact-render-to-string/dist/index.mjs";

const mirror = fileURLToPath(new URL("../../npm/", import.meta.url));

const PAGES = [
  [
    { page: "login", props: { forgotHref: "/forgot" }, sso: { providers: ["github"] } },
    "current-password",
  ],
  [{ page: "signup", props: {} }, "new-password"],
  [{ page: "verify", props: { email: "ada@example.com" } }, "one-time-code"],
  [{ page: "forgot", props: {} }, "email"],
  [{ page: "reset", props: { token: "t" } }, "new-password"],
];

test("preact mirror: whole documents for every page, with labels and autocomplete", () => {
  for (const [data, autocomplete] of PAGES) {
    const html = renderAuthDocument(data, { scriptSrc: "/auth-client.js" });
    assert.match(html, /^<!doctype html>/);
    assert.ok(html.includes(`autocomplete="${autocomplete}"`), data.page);
    assert.match(html, /<label for="gh-[a-z]+-[a-z]+"/);
    assert.match(html, /aria-live="assertive"/);
  }
});

test("preact mirror: style overrides and errors in words", () => {
  const html = renderToString(authPageElement({
    page: "login",
    props: { error: "<script>", styles: { button: { background: "black" } } },
  }));
  assert.match(html, /background:black/);
  assert.ok(html.includes(describeError("nope")));
  assert.ok(!html.includes("<script>"));
});

// Runs in the app directory: imports the package by name, renders with the app's React.
const PROBE = `
import { createElement as h, version } from "react";
import { renderToString } from "react-dom/server";
import * as gh from "@gatehouse/gatehouse/react";
const warnings = [];
console.error = (...a) => warnings.push(a.join(" "));
console.warn = (...a) => warnings.push(a.join(" "));
const pages = JSON.parse(process.argv[2]);
const documents = pages.map((data) => gh.renderAuthDocument(data, { renderToString, scriptSrc: "/c.js" }));
const login = renderToString(h(gh.LoginPage, {
  action: "/api/auth/login",
  signupHref: "/signup",
  error: "invalid_credentials",
  styles: { button: { background: "black" } },
  ssoSlot: h(gh.SsoButtons, { providers: ["google"] }),
  onSuccess: () => {},
}));
process.stdout.write(JSON.stringify({ version, documents, login, warnings }));
`;

function packMirror(dir) {
  execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
    cwd: mirror,
    stdio: "ignore",
  });
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz")));
}

for (const major of [18, 19]) {
  test(`react mirror: a React ${major} app imports @gatehouse/gatehouse/react and renders every page`, () => {
    const dir = mkdtempSync(join(tmpdir(), `gatehouse-react${major}-`));
    try {
      const tarball = packMirror(dir);
      writeFileSync(
        join(dir, "package.json"),
        JSON.stringify({ name: "app", private: true, type: "module" }),
      );
      execFileSync("npm", [
        "install",
        "--no-audit",
        "--no-fund",
        "--no-package-lock",
        "--omit=optional",
        "--ignore-scripts",
        tarball,
        `react@${major}`,
        `react-dom@${major}`,
      ], { cwd: dir, stdio: "ignore" });
      writeFileSync(join(dir, "probe.mjs"), PROBE);
      const out = JSON.parse(
        execFileSync("node", ["probe.mjs", JSON.stringify(PAGES.map((p) => p[0]))], {
          cwd: dir,
          encoding: "utf8",
        }),
      );
      assert.equal(out.version.split(".")[0], String(major));
      assert.deepEqual(out.warnings, [], "React printed no warning");
      PAGES.forEach(([data, autocomplete], i) => {
        const html = out.documents[i];
        assert.match(html, /^<!doctype html>/);
        assert.match(html, new RegExp(`autocomplete="${autocomplete}"`, "i"), data.page);
        assert.match(html, /<label for="gh-[a-z]+-[a-z]+"/);
        assert.match(html, /<form [^>]*method="post"/);
        assert.match(html, /<script type="application\/json" id="gatehouse-auth-data">/);
      });
      assert.match(out.login, /That e-mail and password don(&#x27;|')t match an account\./);
      assert.match(out.login, /background:black/);
      assert.match(
        out.login,
        /href="\/api\/auth\/oauth\/google\/start"[^>]*>Continue with Google</,
      );
      assert.match(out.login, /aria-invalid="true"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
