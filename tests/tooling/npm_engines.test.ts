/**
 * `scripts/npm_engines.ts`, which `deno task build:npm` runs after `npm install`: on installed
 * trees written to a temp directory (top-level, scoped and nested packages), it lists exactly
 * the packages whose `engines.node` excludes the oldest Node the root's `engines.node` allows,
 * and the script exits non-zero naming them.
 */
import assert from "node:assert/strict";
import { checkEngines, formatConflicts } from "../../scripts/npm_engines.ts";

const SCRIPT = new URL("../../scripts/npm_engines.ts", import.meta.url).pathname;
const CONFIG = new URL("../deno.json", import.meta.url).pathname;

type Tree = Record<string, Record<string, unknown>>;

/** Writes `<dir>/<path>/package.json` for each entry; "" is the root package. */
async function tree(files: Tree): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "npm-engines-" });
  for (const [path, pkg] of Object.entries(files)) {
    const at = path ? `${dir}/${path}` : dir;
    await Deno.mkdir(at, { recursive: true });
    await Deno.writeTextFile(`${at}/package.json`, JSON.stringify(pkg));
  }
  return dir;
}

const mirror = (node: string) => ({ name: "mirror", version: "1.0.0", engines: { node } });

Deno.test("npm engines: lists the packages, nested and scoped, that exclude the lowest Node", async () => {
  const dir = await tree({
    "": mirror(">=20"),
    "node_modules/plain": { name: "plain", version: "1.0.0", engines: { node: ">=18" } },
    "node_modules/no-engines": { name: "no-engines", version: "1.0.0" },
    "node_modules/@otel/core": {
      name: "@otel/core",
      version: "3.1.1",
      engines: { node: ">=22.15.0" },
    },
    "node_modules/@otel/old": {
      name: "@otel/old",
      version: "2.12.0",
      engines: { node: "^18.19.0 || >=20.6.0" },
    },
    "node_modules/plain/node_modules/deep": {
      name: "deep",
      version: "0.1.0",
      engines: { node: "20 || >=22" },
    },
    "node_modules/plain/node_modules/deeper-bad": {
      name: "deeper-bad",
      version: "0.2.0",
      engines: { node: "^22" },
    },
    "node_modules/.bin/ignored": { name: "hidden", engines: { node: ">=99" } },
  });
  try {
    const report = await checkEngines(dir);
    assert.equal(report.lowest, "20.0.0");
    assert.equal(report.packages, 6);
    assert.deepEqual(report.conflicts, [
      {
        name: "@otel/core",
        version: "3.1.1",
        requires: ">=22.15.0",
        path: "node_modules/@otel/core",
      },
      {
        name: "@otel/old",
        version: "2.12.0",
        requires: "^18.19.0 || >=20.6.0",
        path: "node_modules/@otel/old",
      },
      {
        name: "deeper-bad",
        version: "0.2.0",
        requires: "^22",
        path: "node_modules/plain/node_modules/deeper-bad",
      },
    ]);
    const text = formatConflicts(report);
    assert.match(text, /@otel\/core@3\.1\.1 requires node >=22\.15\.0/);
    assert.match(text, /do not run on Node 20\.0\.0/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("npm engines: a root range whose lowest version every package allows passes", async () => {
  const dir = await tree({
    "": mirror(">=20.6.0"),
    "node_modules/@otel/old": {
      name: "@otel/old",
      version: "2.12.0",
      engines: { node: "^18.19.0 || >=20.6.0" },
    },
    "node_modules/any": { name: "any", version: "1.0.0", engines: { node: "*" } },
  });
  try {
    const report = await checkEngines(dir);
    assert.equal(report.lowest, "20.6.0");
    assert.equal(report.packages, 2);
    assert.deepEqual(report.conflicts, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("npm engines: a root without a valid engines.node is refused in words", async () => {
  for (const root of [{ name: "mirror" }, mirror("twenty")]) {
    const dir = await tree({ "": root });
    try {
      await assert.rejects(checkEngines(dir), /engines\.node/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("npm engines: the script exits 1 naming the package, 0 when all run", async () => {
  const run = async (dir: string) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", CONFIG, SCRIPT, dir],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { code: out.code, text: dec.decode(out.stdout) + dec.decode(out.stderr) };
  };
  const bad = await tree({
    "": mirror(">=20"),
    "node_modules/new-only": { name: "new-only", version: "9.0.0", engines: { node: ">=22" } },
  });
  const good = await tree({
    "": mirror(">=22"),
    "node_modules/new-only": { name: "new-only", version: "9.0.0", engines: { node: ">=22" } },
  });
  try {
    const b = await run(bad);
    assert.equal(b.code, 1, b.text);
    assert.match(b.text, /new-only@9\.0\.0 requires node >=22/);
    const g = await run(good);
    assert.equal(g.code, 0, g.text);
    assert.match(g.text, /1 installed packages all run on Node 22\.0\.0/);
  } finally {
    await Deno.remove(bad, { recursive: true });
    await Deno.remove(good, { recursive: true });
  }
});
