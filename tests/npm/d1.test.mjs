// The npm mirror's `./d1` entry in Node: signup → code from the captured e-mail → verify →
// login, on a libSQL temp file. Needs `deno task build:npm` first. Run: node --test tests/npm/
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as d1 from "../../npm/d1.js";

test("npm mirror exports ./d1", async () => {
  const pkg = JSON.parse(
    await readFile(new URL("../../npm/package.json", import.meta.url), "utf8"),
  );
  assert.ok(pkg.exports["./d1"], "package.json exports ./d1");
  assert.equal(pkg.dependencies, undefined, "the mirror installs nothing else");
  assert.equal(pkg.peerDependencies["@libsql/client"], "^0.18.0");
  assert.deepEqual(pkg.peerDependenciesMeta["@libsql/client"], { optional: true });
  for (const name of ["signup", "verifyOtp", "login", "openLibsql", "applySchema", "migrate"]) {
    assert.equal(typeof d1[name], "function", name);
  }
});

test("Node: signup → verifyOtp → login against libSQL", async () => {
  const dir = await mkdtemp(join(tmpdir(), "gatehouse-npm-d1-"));
  const db = d1.openLibsql({ url: `file:${join(dir, "site.db")}` });
  try {
    await d1.applySchema(db);
    const sent = [];
    const email = "node@example.com";
    const secret = "node test token secret";
    const s = await d1.signup(db, {
      email,
      password: "correct horse battery staple",
      secret,
      sendEmail: (m) => void sent.push(m),
      iterations: 1000,
    });
    assert.equal(s.ok, true);
    assert.match(s.attempt, /^[\w-]{43}$/);
    assert.equal(sent.length, 1);
    const code = sent[0].text.match(/\b(\d{6})\b/)[1];
    assert.deepEqual(
      await d1.login(db, { email, password: "correct horse battery staple" }),
      { ok: false, error: "email_not_verified" },
    );
    const v = await d1.verifyOtp(db, { email, code, attempt: s.attempt, secret });
    assert.equal(v.ok, true);
    const l = await d1.login(db, { email, password: "correct horse battery staple" });
    assert.deepEqual(l, { ok: true, userId: v.userId });
    assert.deepEqual(await d1.verifyOtp(db, { email, code, attempt: s.attempt, secret }), {
      ok: false,
      error: "invalid_code",
    });
  } finally {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
});
