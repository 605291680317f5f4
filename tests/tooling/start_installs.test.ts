/**
 * `deno task start` installs the runtime packages and nothing that only tests, benchmarks or
 * scripts need: the program's code (the app, the CLI, the published entry points, the files the
 * root tasks run) resolves every import from the root config alone, every npm import of the
 * root config is used by that code, and a `deno run` with the root config and lock file (what
 * `start` does) puts no test-only package in node_modules.
 */
import assert from "node:assert/strict";
import {
  type DenoConfig,
  type DenoLock,
  lockClosure,
  lockKeyName,
  npmName,
  readRootJson,
  ROOT,
  TEST_ONLY,
} from "./_configs.ts";

/**
 * Root imports that the program loads in a way `deno info` cannot follow, with the reason.
 * Everything else in the root config must be reachable from the entry points.
 */
const RUNTIME_UNSEEN: Record<string, string> = {
  "@scalar/api-reference":
    "lib/mail/reference_page.ts serves its browser bundle, found with import.meta.resolve",
};

const root = await readRootJson<DenoConfig>("deno.json");
const dec = new TextDecoder();

/** The files the program starts from: published exports, and what root tasks `deno run`. */
function entryPoints(): string[] {
  const files = new Set(
    Object.values(root.exports ?? {}).map((p) => p.replace(/^\.\//, "")),
  );
  for (const task of Object.values(root.tasks ?? {})) {
    for (const command of task.split(/&&|\|\||;/)) {
      const words = command.trim().split(/\s+/);
      if (
        words[0] !== "deno" || words[1] !== "run" || words.includes("--config")
      ) continue;
      const file = words.slice(2).find((w) => !w.startsWith("-") && /\.[jt]sx?$/.test(w));
      if (file) files.add(file);
    }
  }
  return [...files].sort();
}

interface InfoDependency {
  specifier: string;
  code?: { specifier?: string; error?: string };
  type?: { specifier?: string; error?: string };
}
interface InfoModule {
  specifier: string;
  kind?: string;
  error?: string;
  npmPackage?: string;
  dependencies?: InfoDependency[];
}

/**
 * Runs `fn` in a temporary directory holding copies of the root `deno.json` and `deno.lock`
 * (Deno rewrites a lock file it reads, and sets node_modules up beside the config: the
 * project's own stay untouched).
 */
async function withRootCopy<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-start-" });
  try {
    await Deno.copyFile(`${ROOT}deno.json`, `${dir}/deno.json`);
    await Deno.copyFile(`${ROOT}deno.lock`, `${dir}/deno.lock`);
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Runs deno in `dir` with the copied root config; fails the test on a non-zero exit. */
async function deno(dir: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [args[0], "--config", `${dir}/deno.json`, ...args.slice(1)],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(
    out.code,
    0,
    `deno ${args.join(" ")}: ${dec.decode(out.stderr)}`,
  );
  return dec.decode(out.stdout);
}

/**
 * `deno info --json` of one module importing every entry point, with the root config (from the
 * global cache: the graph is the same, without setting a node_modules up).
 */
function rootGraph(entries: string[]): Promise<InfoModule[]> {
  return withRootCopy(async (dir) => {
    const probe = `${dir}/probe.ts`;
    await Deno.writeTextFile(
      probe,
      entries.map((e) => `import ${JSON.stringify(new URL(e, `file://${ROOT}`).href)};\n`).join(""),
    );
    return (JSON.parse(
      await deno(dir, ["info", "--json", "--node-modules-dir=none", probe]),
    ) as {
      modules: InfoModule[];
    })
      .modules;
  });
}

/** The root config's npm imports, less the test-only ones (which the first test refuses). */
function runtimeNames(): string[] {
  return [
    ...new Set(
      Object.values(root.imports ?? {}).map(npmName)
        .filter((n): n is string => n !== null && !TEST_ONLY.includes(n)),
    ),
  ];
}

const entries = entryPoints();

Deno.test("the entry points include the app, the CLI and every published export", () => {
  for (
    const file of [
      "app/main.ts",
      "cli.ts",
      "mod.ts",
      "d1.ts",
      "react.ts",
      "mail.ts",
    ]
  ) {
    assert.ok(entries.includes(file), `${file} in ${entries.join(", ")}`);
  }
});

Deno.test("the program's code resolves every import from the root config alone", async () => {
  const modules = await rootGraph(entries);
  const problems: string[] = [];
  const used = new Set<string>();
  for (const m of modules) {
    if (m.error) problems.push(m.error);
    if (m.kind === "npm" && m.npmPackage) used.add(lockKeyName(m.npmPackage));
    for (const d of m.dependencies ?? []) {
      const error = d.code?.error ?? d.type?.error;
      if (error) problems.push(error);
      else if (
        m.specifier.startsWith("file:") && d.specifier.startsWith("npm:")
      ) {
        problems.push(
          `${m.specifier} imports "${d.specifier}": put it in deno.json imports`,
        );
      }
    }
  }
  assert.deepEqual(
    problems,
    [],
    "with the root config (what `deno task start` runs with)",
  );
  assert.ok(
    used.has("hono") && used.has("@libsql/client"),
    [...used].join(", "),
  );

  const unused = Object.values(root.imports ?? {})
    .map(npmName)
    .filter((n): n is string => n !== null && !used.has(n) && !(n in RUNTIME_UNSEEN));
  assert.deepEqual(
    [...new Set(unused)],
    [],
    `no code reachable from ${entries.join(", ")} imports these, yet \`deno task start\` ` +
      "installs them: if only tests, benchmarks or scripts use them, keep them in " +
      "tests/deno.json only; if the program loads them in a way deno info cannot see, list them " +
      "in RUNTIME_UNSEEN (tests/tooling/start_installs.test.ts) with the reason",
  );
});

Deno.test("a deno run with the root config and lock installs no test-only package", async () => {
  const testLock = await readRootJson<DenoLock>("tests/deno.lock");
  const rootLock = await readRootJson<DenoLock>("deno.lock");
  // What only the test-only imports pull in, by name: their closure less the runtime one.
  const keys = (names: readonly string[]) =>
    Object.keys(testLock.npm ?? {}).filter((k) => names.includes(lockKeyName(k)));
  const runtime = new Set(
    [...lockClosure(testLock, keys(runtimeNames()))].map(lockKeyName),
  );
  const testOnly = new Set(
    [...lockClosure(testLock, keys(TEST_ONLY))].map(lockKeyName).filter((n) => !runtime.has(n)),
  );
  assert.ok(
    testOnly.has("miniflare") && testOnly.has("workerd"),
    [...testOnly].join(", "),
  );

  const inLock = Object.keys(rootLock.npm ?? {}).map(lockKeyName).filter((n) => testOnly.has(n));
  assert.deepEqual(
    [...new Set(inLock)],
    [],
    "deno.lock holds packages only tests need",
  );

  const installed = await withRootCopy(async (dir) => {
    // With a lock file, Deno sets node_modules up once the program needs any npm package, and
    // then installs every package of the config: one runtime import is enough to see them all.
    await Deno.writeTextFile(
      `${dir}/probe.ts`,
      'import { Hono } from "hono";\nconsole.log(typeof Hono === "function" ? "started" : "");\n',
    );
    assert.equal(
      await deno(dir, ["run", "--quiet", `${dir}/probe.ts`]),
      "started\n",
    );
    const names = new Set<string>();
    for await (const e of Deno.readDir(`${dir}/node_modules/.deno`)) {
      if (/^@?[^@]+@/.test(e.name)) {
        names.add(lockKeyName(e.name).replace("+", "/"));
      }
    }
    return names;
  });
  for (const name of runtimeNames()) {
    assert.ok(installed.has(name), `${name} installed`);
  }
  assert.deepEqual([...installed].filter((n) => testOnly.has(n)).sort(), []);
});
