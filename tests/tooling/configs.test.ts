/**
 * The root config holds the runtime npm imports only; `tests/deno.json` (tests, benchmarks,
 * scripts) holds the same ones, at the same versions, plus the test-only packages.
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

Deno.test("both configs install into their own node_modules with the same unstable features", () => {
  assert.equal(root.nodeModulesDir, "auto");
  assert.equal(tests.nodeModulesDir, "auto");
  assert.deepEqual(tests.unstable ?? [], root.unstable ?? []);
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
});

Deno.test("tests, checks, benchmarks and scripts run with tests/deno.json; start does not", () => {
  const tasks = root.tasks ?? {};
  assert.ok(
    tasks.start && !tasks.start.includes("--config"),
    `start: ${tasks.start}`,
  );
  for (const name of ["test", "bench", "build:npm"]) {
    assert.match(
      tasks[name] ?? "",
      /^deno \w+ .*--config tests\/deno\.json/,
      `task ${name}`,
    );
  }
  // The root's own files are type checked with the root config alone; the rest with the other.
  assert.match(tasks.check ?? "", /deno check \*\.ts app\/ &&/);
  assert.match(
    tasks.check ?? "",
    /deno check --config tests\/deno\.json bench\/ scripts\/ /,
  );
});

Deno.test("both lock files resolve the root's npm imports to the same versions", async () => {
  const rootLock = await readRootJson<DenoLock>("deno.lock");
  const testLock = await readRootJson<DenoLock>("tests/deno.lock");
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
