/**
 * README's install lines for Bun and for JSR's npm layer, tried against a local npm registry
 * (verdaccio, `scripts/local_registry.ts`) holding the npm mirror as `build_npm.ts` builds it:
 *
 * - Bun (the npm mirror): `bun add @gatehouse/gatehouse` installs the mirror and nothing else;
 *   with README's packages of the sign-in pages added the same way, the Preact quick start runs
 *   under Bun as pasted (Bun runs TSX) and prints the page's HTML.
 * - JSR's npm layer: `npx jsr add @gatehouse/gatehouse`, as pasted, with a stand-in for the
 *   layer: the mirror published as `@jsr/gatehouse__gatehouse` (the name JSR gives the package
 *   there), its npm packages as dependencies (JSR lists a package's npm imports so). `jsr add`
 *   has no registry option: it adds `@jsr:registry=https://npm.jsr.io` to the app's `.npmrc`
 *   unless the line is there, and runs `npm install @gatehouse/gatehouse@npm:@jsr/…`. Here the
 *   app's `.npmrc` holds that line and, after it, the local registry for the scope, which npm
 *   takes (the last one wins). The core and the Preact quick start then run in Node. What this cannot show is JSR's own build of the package (its
 *   transpilation, its `package.json`): JSR is not reachable from the test machines.
 *
 * `bunx jsr add` is not tried: for Bun, `jsr add` writes JSR's registry into `bunfig.toml`,
 * which no setting of Bun's outranks.
 */
import assert from "node:assert/strict";
import ts from "typescript";
import { startLocalRegistry } from "../../scripts/local_registry.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const ROOT = new URL("../../", import.meta.url).pathname;
const README = await Deno.readTextFile(`${ROOT}README.md`);

function installed(cmd: string): boolean {
  try {
    return new Deno.Command(cmd, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}
const HAVE_NPM = installed("npm");
const HAVE_BUN = installed("bun");
if (!HAVE_BUN) console.warn("readme Bun lines ignored: bun is missing (npm install -g bun)");

/** A temp directory removed when the tests of this file end. */
async function tempDir(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
  return dir;
}

/** Runs a command in `cwd`; fails the test with its output on a non-zero exit. */
async function sh(
  cmd: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<string> {
  const out = await new Deno.Command(cmd, {
    args,
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  assert.ok(
    out.success,
    `${cmd} ${args.join(" ")}:\n${text.decode(out.stdout)}\n${text.decode(out.stderr)}`,
  );
  return text.decode(out.stdout);
}

/** A README line in backquotes that starts with `start`. */
function readmeLine(start: string): string {
  const found = README.match(
    new RegExp(
      "`(" + start.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") +
        "[^`]*)`",
    ),
  )?.[1];
  assert.ok(found, `README has the line ${start}…`);
  return found;
}

/** The sign-in pages quick start, as README has it. */
function pagesQuickStart(): string {
  const code = [...README.matchAll(/```tsx\n([\s\S]*?)```/g)].map((m) => m[1])
    .find((c) => c.includes('from "@gatehouse/gatehouse/preact"'));
  assert.ok(code, "README has the sign-in pages quick start");
  return code;
}

/** What the quick start prints: the sign-in page's HTML, in the style it gives. */
function assertPage(html: string): void {
  assert.match(html, /^<main style="[^"]+"><div style="[^"]+"><h1 [^>]*>Sign in<\/h1>/);
  assert.ok(html.includes('<form method="post" action="/api/auth/login">'), html);
  assert.ok(html.includes("background:#0b5"), html);
}

/** A fresh app directory with a package.json, as `npm init -y` leaves it (ES modules). */
async function newApp(): Promise<string> {
  const dir = await tempDir("gatehouse-readme-runtime-");
  await Deno.writeTextFile(
    `${dir}/package.json`,
    JSON.stringify({ name: "app", private: true, type: "module" }),
  );
  return dir;
}

/** The names under node_modules, scopes opened, without npm's and Bun's dot entries. */
async function topPackages(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(`${dir}/node_modules`)) {
    if (e.name.startsWith(".")) continue;
    if (!e.name.startsWith("@")) names.push(e.name);
    else {
      for await (const s of Deno.readDir(`${dir}/node_modules/${e.name}`)) {
        names.push(`${e.name}/${s.name}`);
      }
    }
  }
  return names.sort();
}

Deno.test({
  name: "readme: the Bun lines and npx jsr add, from a registry, and the quick starts they run",
  ignore: !HAVE_NPM,
  ...opts,
  async fn(t) {
    const registry = await startLocalRegistry();
    try {
      const mirror = await tempDir("gatehouse-readme-mirror-");
      await sh(Deno.execPath(), [
        "run",
        "-A",
        "--config",
        `${ROOT}tests/deno.json`,
        `${ROOT}scripts/build_npm.ts`,
        "--out",
        mirror,
        "--no-install",
      ], ROOT);
      await registry.publish(mirror);

      await t.step({
        name: "bun add: the mirror alone; the Preact quick start under Bun",
        ignore: !HAVE_BUN,
        async fn() {
          const line = readmeLine("bun add @gatehouse/gatehouse");
          assert.equal(line, "bun add @gatehouse/gatehouse");
          const bun = (dir: string, l: string) =>
            sh("bun", [...l.split(/\s+/).slice(1), "--registry", registry.url], dir);
          const alone = await newApp();
          await bun(alone, line);
          assert.deepEqual(await topPackages(alone), ["@gatehouse/gatehouse"]);

          // README's line of the sign-in pages' packages, with Bun's command
          const pages = readmeLine("npm install @gatehouse/gatehouse preact ")
            .replace(/^npm install /, "bun add ");
          const app = await newApp();
          await bun(app, pages);
          await Deno.writeTextFile(`${app}/main.tsx`, pagesQuickStart());
          assertPage(await sh("bun", ["main.tsx"], app));
        },
      });

      await t.step(
        "npx jsr add: a stand-in for JSR's npm layer; the quick starts in Node",
        async () => {
          // the mirror as JSR's npm layer names it, its npm packages as dependencies
          const standIn = await tempDir("gatehouse-readme-jsr-npm-");
          await sh("cp", ["-R", `${mirror}/.`, standIn], ROOT);
          const pkg = JSON.parse(await Deno.readTextFile(`${standIn}/package.json`));
          pkg.name = "@jsr/gatehouse__gatehouse";
          pkg.dependencies = { ...pkg.dependencies, ...pkg.peerDependencies };
          delete pkg.peerDependencies;
          delete pkg.peerDependenciesMeta;
          await Deno.writeTextFile(`${standIn}/package.json`, JSON.stringify(pkg, null, 2));
          await registry.publish(standIn);

          const line = readmeLine("npx jsr add @gatehouse/gatehouse");
          assert.equal(line, "npx jsr add @gatehouse/gatehouse");
          const app = await newApp();
          // The app's .npmrc has JSR's line already (jsr add then leaves the file as it is)
          // and, after it, the stand-in's registry for the scope: npm takes the last. (npm's
          // setting in the environment, npm_config_@jsr:registry, would outrank the file, but
          // jsr runs npm through /bin/sh, and dash drops a variable whose name has "@" and ":".)
          const npmrc = `@jsr:registry=https://npm.jsr.io\n@jsr:registry=${registry.url}\n`;
          await Deno.writeTextFile(`${app}/.npmrc`, npmrc);
          await sh(line.split(" ")[0], line.split(" ").slice(1), app, {
            // the jsr command itself from the local registry (it proxies npm's)
            "npm_config_registry": registry.url,
            // the answer a reader gives npx's "Ok to proceed?" for installing jsr
            "npm_config_yes": "true",
            "npm_config_audit": "false",
            "npm_config_fund": "false",
          });
          assert.equal(await Deno.readTextFile(`${app}/.npmrc`), npmrc, "jsr add saw its line");
          const manifest = JSON.parse(await Deno.readTextFile(`${app}/package.json`));
          assert.match(
            manifest.dependencies["@gatehouse/gatehouse"],
            /^npm:@jsr\/gatehouse__gatehouse@/,
          );
          const got = JSON.parse(
            await Deno.readTextFile(`${app}/node_modules/@gatehouse/gatehouse/package.json`),
          );
          assert.equal(got.name, "@jsr/gatehouse__gatehouse");
          // every npm package of every part comes with it
          const top = await topPackages(app);
          for (const name of ["preact", "hono", "@libsql/client", "acme-client"]) {
            assert.ok(top.includes(name), `${name} in ${top.join(", ")}`);
          }

          await Deno.writeTextFile(
            `${app}/core.mjs`,
            'import { hashPassword, verifyPassword } from "@gatehouse/gatehouse";\n' +
              'const h = await hashPassword("correct horse battery staple");\n' +
              'console.log(await verifyPassword("correct horse battery staple", h));\n',
          );
          assert.equal(await sh("node", ["core.mjs"], app), "true\n");
          // the Preact quick start as the app's TypeScript compiler emits it (Node runs no TSX)
          const js = ts.transpileModule(pagesQuickStart(), {
            compilerOptions: {
              jsx: ts.JsxEmit.ReactJSX,
              module: ts.ModuleKind.ESNext,
              target: ts.ScriptTarget.ES2022,
            },
          }).outputText;
          await Deno.writeTextFile(`${app}/main.mjs`, js);
          assertPage(await sh("node", ["main.mjs"], app));
        },
      );
    } finally {
      await registry.stop();
    }
  },
});
