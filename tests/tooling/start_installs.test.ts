/**
 * `deno task start` installs what the reference app runs and nothing else: the package's code
 * (the published entry points, the CLI among them) resolves every import from the root config
 * alone and uses every npm import of it; the app's code (the files the tasks run with
 * `--config app/deno.json`: the app, the mail API's standalone server and webhook tool)
 * resolves every import from `app/deno.json` alone and uses every npm import of it; and a
 * `deno run` with the app's config and lock file (what `start` does) installs the app's
 * packages only: none of the web server's, none only tests need, fewer than 60 in all and
 * under 60 MB of files in its node_modules (every regular file's size, symbolic links not
 * followed: the same figure whether Deno hard-links the packages from its cache or copies
 * them, so it does not depend on DENO_DIR), both within 15% of what README's "Two commands"
 * says (the package count exactly).
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
const RUNTIME_UNSEEN: Record<string, string> = {};

const root = await readRootJson<DenoConfig>("deno.json");
const app = await readRootJson<DenoConfig>("app/deno.json");
const dec = new TextDecoder();

/**
 * The files root tasks `deno run` with config `config` (`null`: with the root config, no
 * `--config`).
 */
function taskFiles(config: string | null): string[] {
  const files = new Set<string>();
  for (const task of Object.values(root.tasks ?? {})) {
    for (const command of task.split(/&&|\|\||;/)) {
      const words = command.trim().split(/\s+/);
      if (words[0] !== "deno" || words[1] !== "run") continue;
      const at = words.indexOf("--config");
      if ((at < 0 ? null : words[at + 1]) !== config) continue;
      const file = words.slice(2).find((w) => !w.startsWith("-") && /\.[jt]sx?$/.test(w));
      if (file) files.add(file);
    }
  }
  return [...files].sort();
}

/** The files the package starts from: published exports, and what root tasks `deno run`. */
function entryPoints(): string[] {
  const files = new Set(
    Object.values(root.exports ?? {}).map((p) => p.replace(/^\.\//, "")),
  );
  for (const file of taskFiles(null)) files.add(file);
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
 * Runs `fn` in a temporary directory holding copies of a config and its lock file (the root's
 * `deno.json` and `deno.lock` unless told; Deno rewrites a lock file it reads, and sets
 * node_modules up beside the config: the project's own stay untouched).
 */
async function withRootCopy<T>(
  fn: (dir: string) => Promise<T>,
  from = "",
): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-start-" });
  try {
    await Deno.copyFile(`${ROOT}${from}deno.json`, `${dir}/deno.json`);
    await Deno.copyFile(`${ROOT}${from}deno.lock`, `${dir}/deno.lock`);
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The bytes of the regular files under `dir`, symbolic links not followed. */
async function fileBytes(dir: string): Promise<number> {
  let bytes = 0;
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory) bytes += await fileBytes(path);
    else if (e.isFile) bytes += (await Deno.lstat(path)).size;
  }
  return bytes;
}

/** How far README's megabytes may be from the measured ones (a fraction of the measured). */
const SIZE_TOLERANCE = 0.15;

/** What README's "Two commands" says `deno task start` installs: packages and MB. */
async function readmeStart(): Promise<{ packages: number; mb: number }> {
  const readme = (await Deno.readTextFile(`${ROOT}README.md`)).replace(/\s+/g, " ");
  const m = readme.match(
    /`deno task start` installs (\d+) npm packages, (\d+(?:\.\d+)?) MB of files/,
  );
  assert.ok(m, "README says what `deno task start` installs: N npm packages, X MB of files");
  return { packages: Number(m[1]), mb: Number(m[2]) };
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
 * `deno info --json` of one module importing every entry point, with the root config (or the
 * config in `from`; from the global cache: the graph is the same, without setting a
 * node_modules up).
 */
function rootGraph(entries: string[], from = ""): Promise<InfoModule[]> {
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
  }, from);
}

/** A config's npm imports, less the test-only ones (which the configs test refuses). */
function runtimeNames(config: DenoConfig = root): string[] {
  return [
    ...new Set(
      Object.values(config.imports ?? {}).map(npmName)
        .filter((n): n is string => n !== null && !TEST_ONLY.includes(n)),
    ),
  ];
}

const entries = entryPoints();
const appEntries = taskFiles("app/deno.json");

Deno.test("the entry points include the CLI and every published export; the app's, the app", () => {
  for (const file of ["cli.ts", "mod.ts", "d1.ts", "react.ts", "mail.ts", "admin.ts"]) {
    assert.ok(entries.includes(file), `${file} in ${entries.join(", ")}`);
  }
  assert.deepEqual(appEntries, [
    "app/main.ts",
    "lib/mail/standalone.ts",
    "lib/mail/webhook_cli.ts",
  ]);
});

/** The problems of a graph (unresolved imports, npm: specifiers not in the config), its npm names. */
function graphProblems(modules: InfoModule[]): { problems: string[]; used: Set<string> } {
  const problems: string[] = [];
  const used = new Set<string>();
  for (const m of modules) {
    if (m.error) problems.push(m.error);
    if (m.kind === "npm" && m.npmPackage) used.add(lockKeyName(m.npmPackage));
    for (const d of m.dependencies ?? []) {
      const error = d.code?.error ?? d.type?.error;
      if (error) problems.push(error);
      else if (m.specifier.startsWith("file:") && d.specifier.startsWith("npm:")) {
        problems.push(`${m.specifier} imports "${d.specifier}": put it in the config's imports`);
      }
    }
  }
  return { problems, used };
}

Deno.test("the app's code resolves every import from app/deno.json alone and uses every one", async () => {
  const { problems, used } = graphProblems(await rootGraph(appEntries, "app/"));
  assert.deepEqual(problems, [], "with app/deno.json (what `deno task start` runs with)");
  assert.ok(used.has("hono") && used.has("@libsql/client"), [...used].join(", "));
  const unused = runtimeNames(app).filter((n) => !used.has(n));
  assert.deepEqual(unused, [], `nothing ${appEntries.join(", ")} runs imports these`);
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

Deno.test("a deno run with the app's config and lock installs the app's packages alone, fewer than 60, under 60 MB, as README says", async () => {
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

  const appLock = await readRootJson<DenoLock>("app/deno.lock");
  for (const [file, lock] of [["deno.lock", rootLock], ["app/deno.lock", appLock]] as const) {
    const inLock = Object.keys(lock.npm ?? {}).map(lockKeyName).filter((n) => testOnly.has(n));
    assert.deepEqual([...new Set(inLock)], [], `${file} holds packages only tests need`);
  }

  const { installed, count, bytes } = await withRootCopy(async (dir) => {
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
    let count = 0;
    for await (const e of Deno.readDir(`${dir}/node_modules/.deno`)) {
      if (/^@?[^@]+@/.test(e.name)) {
        names.add(lockKeyName(e.name).replace("+", "/"));
        count++;
      }
    }
    return { installed: names, count, bytes: await fileBytes(`${dir}/node_modules`) };
  }, "app/");
  for (const name of runtimeNames(app)) {
    assert.ok(installed.has(name), `${name} installed`);
  }
  assert.deepEqual([...installed].filter((n) => testOnly.has(n)).sort(), []);
  // the web server's packages are not the app's (those the app's own packages depend on are:
  // @simplewebauthn/server, for passkeys, brings @peculiar/x509)
  const appPackages = new Set(Object.keys(appLock.npm ?? {}).map(lockKeyName));
  const server = runtimeNames().filter((n) =>
    !runtimeNames(app).includes(n) && !appPackages.has(n)
  );
  assert.ok(server.includes("acme-client"), server.join(", "));
  assert.deepEqual([...installed].filter((n) => server.includes(n)), [], "the server's packages");
  assert.ok(count < 60, `${count} packages installed`);
  const mb = Math.round(bytes / 1e5) / 10;
  console.log(`deno task start installs ${count} packages, ${mb} MB of files`);
  assert.ok(bytes < 60e6, `${mb} MB installed`);
  const said = await readmeStart();
  assert.ok(
    said.packages === count && Math.abs(said.mb - mb) / mb <= SIZE_TOLERANCE,
    `README says ${said.packages} packages, ${said.mb} MB; measured ${count} packages, ${mb} ` +
      'MB: update README\'s "Two commands"',
  );
});
