/**
 * The root config holds the package's npm imports only (what the published entry points import);
 * `app/deno.json` (the reference app, `deno task start`) holds the app's, a subset, the same;
 * `tests/deno.json` (tests, benchmarks, scripts) holds the root's, at the same versions, plus the
 * test-only packages.
 */
import assert from "node:assert/strict";
import {
  type DenoConfig,
  type DenoLock,
  lockedVersions,
  npmName,
  readRootJson,
  TEST_ONLY,
} from "./_configs.ts";

const root = await readRootJson<DenoConfig>("deno.json");
const tests = await readRootJson<DenoConfig>("tests/deno.json");
const app = await readRootJson<DenoConfig>("app/deno.json");
const rootImports = root.imports ?? {};
const testImports = tests.imports ?? {};

Deno.test("the root config imports no test-only package", () => {
  const found = Object.entries(rootImports)
    .filter(([, value]) => TEST_ONLY.includes(npmName(value) ?? ""))
    .map(([key]) => key);
  assert.deepEqual(
    found,
    [],
    `deno.json imports ${found.join(", ")}, which only tests, benchmarks or scripts use; ` +
      `\`deno task start\` would install them. Keep them in tests/deno.json only.`,
  );
  for (const name of TEST_ONLY) {
    assert.ok(
      Object.values(testImports).some((v) => npmName(v) === name),
      `tests/deno.json has no import of ${name}; drop it from TEST_ONLY in tests/tooling/_configs.ts ` +
        `if nothing uses it any more`,
    );
  }
});

Deno.test("tests/deno.json holds every import of the root config, the same", () => {
  const wrong = Object.entries(rootImports).filter(([key, value]) => testImports[key] !== value);
  assert.deepEqual(
    wrong.map(([key]) => key),
    [],
    "tests/deno.json imports must hold every entry of deno.json imports, unchanged; set:\n" +
      wrong.map(([key, value]) => `    ${JSON.stringify(key)}: ${JSON.stringify(value)},`)
        .join("\n"),
  );
});

Deno.test("app/deno.json holds some imports of the root config, the same", () => {
  const appImports = app.imports ?? {};
  const wrong = Object.entries(appImports).filter(([key, value]) => rootImports[key] !== value);
  assert.deepEqual(
    wrong.map(([key, value]) => `${key}: ${value}, deno.json: ${rootImports[key] ?? "none"}`),
    [],
    "the app runs the package's versions: each app/deno.json import is deno.json's, unchanged",
  );
  assert.ok(Object.keys(appImports).length > 0);
});

Deno.test("tests/deno.json maps the package's own name to each of the root's exports", () => {
  assert.ok(root.name && root.exports, "deno.json has a name and exports");
  const expected = Object.fromEntries(
    Object.entries(root.exports).map((
      [key, path],
    ) => [`${root.name}${key.slice(1)}`, `../${path.replace(/^\.\//, "")}`]),
  );
  const actual = Object.fromEntries(
    Object.entries(testImports).filter(([key]) =>
      key === root.name || key.startsWith(`${root.name}/`)
    ),
  );
  assert.deepEqual(
    actual,
    expected,
    "tests/deno.json self-imports follow deno.json exports",
  );
});

Deno.test("the app and tests install into their own node_modules; the root installs on `deno install`", () => {
  // `deno task` installs the root config's imports before running any task: "manual" keeps
  // `deno task start` (and every other task) from installing the web server's packages
  assert.equal(root.nodeModulesDir, "manual");
  assert.equal(app.nodeModulesDir, "auto");
  assert.equal(tests.nodeModulesDir, "auto");
  assert.deepEqual(tests.unstable ?? [], root.unstable ?? []);
  assert.deepEqual(app.unstable ?? [], root.unstable ?? []);
});

Deno.test("deno fmt and deno lint format and lint alike under either config", () => {
  // `deno fmt tests/x.ts` (a path under tests/) takes tests/deno.json as its config; `deno fmt`
  // in the root takes deno.json for the same file: both must give the same answer.
  const options = (c: DenoConfig, key: "fmt" | "lint") => {
    const { exclude: _exclude, include: _include, ...rest } = c[key] ?? {};
    return rest;
  };
  assert.deepEqual(options(tests, "fmt"), options(root, "fmt"));
  assert.deepEqual(options(tests, "lint"), options(root, "lint"));
  assert.deepEqual(options(app, "fmt"), options(root, "fmt"));
  assert.deepEqual(options(app, "lint"), options(root, "lint"));
});

Deno.test("tests, checks, benchmarks and scripts run with tests/deno.json; the app with app/deno.json", () => {
  const tasks = root.tasks ?? {};
  for (const name of ["start", "mail", "mail:listen", "mail:replay"]) {
    assert.match(tasks[name] ?? "", /^deno run -A --config app\/deno\.json /, `task ${name}`);
  }
  for (const name of ["test", "bench", "build:npm"]) {
    assert.match(
      tasks[name] ?? "",
      /^deno \w+ .*--config tests\/deno\.json/,
      `task ${name}`,
    );
  }
  // The root's own files are type checked with the root config alone, the app with its own;
  // the rest with the tests'. The root's packages are installed first (doc lint and publish
  // resolve them).
  assert.match(tasks.check ?? "", /^deno install --quiet && /);
  assert.match(
    tasks.check ?? "",
    /deno check --quiet \*\.ts && deno check --quiet --config app\/deno\.json app\/ &&/,
  );
  assert.match(
    tasks.check ?? "",
    /deno check --quiet --config tests\/deno\.json bench\/ scripts\/ /,
  );
  // the doc lint goes through the script that leaves out deno doc's misread @types/react
  // reference (tests/tooling/quiet.test.ts), the publish dry run through its quiet script
  assert.match(tasks.check ?? "", / scripts\/doc_lint\.ts \*\.ts && /);
  assert.doesNotMatch(tasks.check ?? "", /deno doc --lint/);
  assert.match(tasks.check ?? "", / scripts\/publish_dry_run\.ts$/);
});

Deno.test("the three lock files resolve the root's npm imports to the same versions", async () => {
  const rootLock = await readRootJson<DenoLock>("deno.lock");
  const testLock = await readRootJson<DenoLock>("tests/deno.lock");
  const appLock = await readRootJson<DenoLock>("app/deno.lock");
  const appNames = [
    ...new Set(Object.values(app.imports ?? {}).map(npmName).filter((n) => n !== null)),
  ];
  const inApp = lockedVersions(appLock, appNames);
  const inRoot = lockedVersions(rootLock, appNames);
  assert.deepEqual(
    appNames.filter((n) => JSON.stringify(inApp.get(n)) !== JSON.stringify(inRoot.get(n))),
    [],
    "app/deno.lock must resolve the app's imports as deno.lock does: copy deno.lock to " +
      "app/deno.lock and run `deno install --config app/deno.json` (it keeps those versions)",
  );
  const names = [
    ...new Set(
      Object.values(rootImports).map(npmName).filter((n) => n !== null),
    ),
  ];
  const a = lockedVersions(rootLock, names);
  const b = lockedVersions(testLock, names);
  const missing = names.filter((n) => !a.has(n));
  assert.deepEqual(
    missing,
    [],
    "deno.lock lacks these imports; run `deno install`",
  );
  const differ = names.filter((n) => JSON.stringify(a.get(n)) !== JSON.stringify(b.get(n)));
  assert.deepEqual(
    differ.map((n) => `${n}: deno.lock ${a.get(n)}, tests/deno.lock ${b.get(n) ?? "none"}`),
    [],
    "tests must run the versions `deno task start` runs: " +
      "run `deno install --config tests/deno.json`, then align the lock entries",
  );
});
