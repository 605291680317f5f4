/**
 * Every TypeScript quick start of README.md, extracted from the file and run as pasted in a
 * fresh app directory, against the package as JSR serves it (`hydration/jsr_form.ts`: every
 * published file, bare specifiers pinned to the `deno.json` imports). The app's `deno.json` is
 * what `deno add jsr:@gatehouse/gatehouse` writes, with the package's entry points mapped to
 * that form (JSR is not reachable from the test machines), and the npm packages a quick start
 * says to add are added by a real `deno add`. The only edits are the ones a reader makes: the
 * key `deno task mail` printed for `<API_KEY>`, and free ports instead of fixed ones (tests
 * never take fixed ports); the fixed ports themselves are checked not to collide with
 * `deno task start`.
 */
import assert from "node:assert/strict";
import { loadAppEnv } from "../../app/env.ts";
import { freePort } from "../server/fixtures/helpers.ts";
import ts from "typescript";
import { startLocalRegistry } from "../../scripts/local_registry.ts";
import { buildJsrForm } from "./hydration/jsr_form.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const ROOT = new URL("../../", import.meta.url).pathname;
const README = await Deno.readTextFile(`${ROOT}README.md`);
const BLOCKS = [...README.matchAll(/```(ts|tsx)\n([\s\S]*?)```/g)].map((m) => ({
  lang: m[1],
  code: m[2],
  entry: m[2].match(/from "(@gatehouse\/gatehouse[^"]*)"/)?.[1] ?? "(none)",
}));
const APP_PORT = loadAppEnv({}).PORT;
const DENO_JSON = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as {
  name: string;
  version: string;
  exports: Record<string, string>;
};

/** A temp directory removed when the tests of this file end. */
async function tempDir(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));
  return dir;
}

let jsrForm: Promise<string> | null = null;

/** The package as JSR serves it, built once for the file (removed when the tests end). */
function jsrDir(): Promise<string> {
  jsrForm ??= (async () => {
    const dir = await tempDir("gatehouse-readme-jsr-");
    await buildJsrForm(dir, Object.values(DENO_JSON.exports).map((p) => p.replace(/^\.\//, "")));
    return dir;
  })();
  return jsrForm;
}

/**
 * A fresh app directory: `deno.json` imports as `deno add jsr:@gatehouse/gatehouse` writes them
 * (each entry point mapped to the JSR form), then `deno add <npm>` for real when given, then
 * `extra` imports.
 */
async function appDir(npm: string[] = [], extra: Record<string, string> = {}): Promise<string> {
  const jsr = await jsrDir();
  const dir = await tempDir("gatehouse-readme-");
  const imports: Record<string, string> = {};
  for (const [key, path] of Object.entries(DENO_JSON.exports)) {
    imports[`${DENO_JSON.name}${key.slice(1)}`] = new URL(`file://${jsr}/${path.slice(2)}`).href;
  }
  await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ imports }, null, 2));
  if (npm.length > 0) {
    const added = await new Deno.Command(Deno.execPath(), {
      args: ["add", ...npm],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(
      added.success,
      `deno add ${npm.join(" ")}: ${new TextDecoder().decode(added.stderr)}`,
    );
  }
  const config = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
  Object.assign(config.imports, extra);
  await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify(config, null, 2));
  return dir;
}

function block(entry: string): { lang: string; code: string } {
  const found = BLOCKS.find((b) => b.entry === entry);
  assert.ok(found, `README has a quick start importing ${entry}`);
  return found;
}

interface Run {
  output(): string;
  done: Promise<Deno.CommandStatus>;
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  stop(): Promise<void>;
}

/**
 * Runs `code` as the `main` file of an app directory (a fresh one unless given); `app: "clone"`
 * runs it with the config of this checkout's tasks instead (`deno task mail`: `app/deno.json`).
 */
async function run(
  code: string,
  lang: string,
  env: Record<string, string> = {},
  app?: string,
): Promise<Run> {
  const clone = app === "clone";
  const dir = clone
    ? await Deno.makeTempDir({ prefix: "gatehouse-readme-" })
    : app ?? await appDir();
  const file = `${dir}/main.${lang}`;
  await Deno.writeTextFile(file, code);
  const base: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) base[name] = value;
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--check", "-A", ...(clone ? ["--config", `${ROOT}app/deno.json`] : []), file],
    cwd: dir,
    env: { ...base, ...env },
    clearEnv: true, // no SESSION_SECRET or anything else of the caller's
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const pump = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) out += text;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const done = child.status.then(async (s) => {
    await pumps;
    return s;
  });
  let exited = false;
  done.then(() => (exited = true));
  return {
    output: () => out,
    done,
    async waitFor(pattern) {
      // up to a minute (the first run may compile); a quick start that never gets there fails
      for (let i = 0; i < 1200; i++) {
        const m = out.match(pattern);
        if (m) return m;
        if (exited) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no ${pattern} in the output:\n${out}`);
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* exited */ }
      await done;
    },
  };
}

Deno.test("readme: the Deno install line is the one the tests' app config stands for", () => {
  assert.ok(README.includes("`deno add jsr:@gatehouse/gatehouse`"));
  assert.equal(DENO_JSON.name, "@gatehouse/gatehouse");
});

/** README's `links` config for trying the quick starts against a clone, the clone being ROOT. */
function linksConfig(): { imports: Record<string, string>; links: string[] } {
  const config = [...README.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]))
    .find((c) => Array.isArray(c.links));
  assert.ok(config, "README shows the links config");
  assert.deepEqual(config.links, ["../gatehouse"]);
  assert.equal(
    config.imports["@gatehouse/gatehouse"],
    `jsr:@gatehouse/gatehouse@^${DENO_JSON.version}`,
    "the import the links config names is the version of the clone",
  );
  return { ...config, links: [ROOT.replace(/\/$/, "")] };
}

Deno.test({
  name: "readme: with the links config, the quick starts run against the clone",
  ...opts,
  async fn() {
    const app = await tempDir("gatehouse-readme-links-");
    await Deno.writeTextFile(`${app}/deno.json`, JSON.stringify(linksConfig()));
    const added = await new Deno.Command(Deno.execPath(), {
      args: ["add", ...preactInstall()],
      cwd: app,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(added.success, new TextDecoder().decode(added.stderr));
    const d1 = block("@gatehouse/gatehouse/d1");
    const flows = await run(d1.code, d1.lang, {}, app);
    try {
      assert.equal((await flows.done).code, 0, flows.output());
      assert.match(flows.output(), /invalid_code|\b123456\b/);
    } finally {
      await flows.stop();
    }
    const pages = block("@gatehouse/gatehouse/preact");
    const html = await run(pages.code, pages.lang, {}, app);
    try {
      assert.equal((await html.done).code, 0, html.output());
      assert.match(html.output(), /<form method="post" action="\/api\/auth\/login">/);
    } finally {
      await html.stop();
    }
  },
});

Deno.test("readme: every TypeScript quick start is covered here", () => {
  assert.deepEqual(
    BLOCKS.map((b) => b.entry).sort(),
    [
      "@gatehouse/gatehouse",
      "@gatehouse/gatehouse/admin",
      "@gatehouse/gatehouse/d1",
      "@gatehouse/gatehouse/mail",
      "@gatehouse/gatehouse/preact",
    ],
  );
});

Deno.test({
  name: "readme: the core quick start without SESSION_SECRET fails with AuthError(invalid_secret)",
  ...opts,
  async fn() {
    const { code, lang } = block("@gatehouse/gatehouse");
    const port = Number(code.match(/Deno\.serve\(\{ port: (\d+) \}/)?.[1]);
    assert.ok(port > 0 && port !== APP_PORT, `its port ${port} is not deno task start's`);
    const app = await run(code.replace(`port: ${port}`, "port: 0"), lang);
    try {
      const [, listen] = await app.waitFor(/Listening on http:\/\/[^:]+:(\d+)\//);
      const res = await fetch(`http://127.0.0.1:${listen}/`, {
        method: "POST",
        body: new URLSearchParams({
          email: "me@example.com",
          password: "correct horse battery staple",
        }),
        redirect: "manual",
      });
      await res.body?.cancel();
      assert.equal(res.status, 500);
      await app.waitFor(/invalid_secret/);
      assert.match(app.output(), /AuthError/);
      assert.doesNotMatch(app.output(), /TypeError/);
    } finally {
      await app.stop();
    }
  },
});

Deno.test({
  name: "readme: the core quick start with SESSION_SECRET signs the owner in",
  ...opts,
  async fn() {
    const { code, lang } = block("@gatehouse/gatehouse");
    const app = await run(code.replace(/port: \d+/, "port: 0"), lang, {
      SESSION_SECRET: "a long random secret for the readme test",
    });
    try {
      const [, listen] = await app.waitFor(/Listening on http:\/\/[^:]+:(\d+)\//);
      const url = `http://127.0.0.1:${listen}/`;
      const post = (password: string) =>
        fetch(url, {
          method: "POST",
          body: new URLSearchParams({ email: "me@example.com", password }),
          redirect: "manual",
        });
      const wrong = await post("wrong");
      await wrong.body?.cancel();
      assert.equal(wrong.status, 401);
      const ok = await post("correct horse battery staple");
      await ok.body?.cancel();
      assert.equal(ok.status, 303);
      const cookie = ok.headers.get("set-cookie")!.split(";")[0];
      const home = await fetch(url, { headers: { cookie } });
      assert.equal(await home.text(), "hello me@example.com");
    } finally {
      await app.stop();
    }
  },
});

Deno.test({
  name: "readme: the database flows quick start runs to its documented error code",
  ...opts,
  async fn() {
    const { code, lang } = block("@gatehouse/gatehouse/d1");
    const app = await run(code, lang);
    try {
      const status = await app.done;
      assert.equal(status.code, 0, app.output());
      assert.match(app.output(), /ada@example\.com/);
      // The made-up code "123456" is wrong, except once in a million signups.
      assert.ok(/invalid_code/.test(app.output()) || /\b123456\b/.test(app.output()), app.output());
    } finally {
      await app.stop();
    }
  },
});

/** The install line of the sign-in pages: the npm packages of its `deno add`. */
function preactInstall(): string[] {
  const line = README.match(/`deno add (npm:preact [^`]+)`/)?.[1];
  assert.ok(line, "README says which npm packages the sign-in pages need");
  return line.split(/\s+/);
}

/** The import map lines docs/react.md gives a Deno app on Preact 10. */
async function preact10Lines(): Promise<Record<string, string>> {
  const doc = await Deno.readTextFile(`${ROOT}docs/react.md`);
  const block = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]))
    .find((b) => Object.keys(b.imports).some((k) => k.startsWith("npm:preact@")));
  assert.ok(block, "docs/react.md has the import map of a Deno app on Preact 10");
  return Object.fromEntries(
    Object.entries(block.imports as Record<string, string>).filter(([k]) => k.startsWith("npm:")),
  );
}

for (const preact of [11, 10]) {
  Deno.test({
    name: `readme: the sign-in pages quick start prints the page's HTML with Preact ${preact}`,
    ...opts,
    async fn() {
      const { code, lang } = block("@gatehouse/gatehouse/preact");
      const npm = preactInstall();
      const app = preact === 11
        ? await appDir(npm)
        : await appDir(npm.map((p) => p === "npm:preact" ? "npm:preact@^10.29.8" : p), {
          ...await preact10Lines(),
        });
      // docs/react.md: the lock written before the lines were there is deleted once
      if (preact === 10) await Deno.remove(`${app}/deno.lock`);
      const config = JSON.parse(await Deno.readTextFile(`${app}/deno.json`));
      assert.match(config.imports.preact, new RegExp(`^npm:preact@\\^${preact}\\.`));
      const ran = await run(code, lang, {}, app);
      try {
        assert.equal((await ran.done).code, 0, ran.output());
        // `deno run --check` says what it checked first, on stderr
        const html = ran.output().replace(/^Check .*\n/gm, "");
        assert.match(html, /^<main style="[^"]+"><div style="[^"]+"><h1 [^>]*>Sign in<\/h1>/);
        assert.ok(html.includes('<form method="post" action="/api/auth/login">'), html);
        assert.ok(html.includes("Continue with GitHub"), html);
        assert.ok(html.includes("background:#0b5"), html);
        assert.ok(html.length > 2000, html);
      } finally {
        await ran.stop();
      }
    },
  });
}

Deno.test({
  name: "readme: the mail client quick start lists the items of `deno task mail` with its key",
  ...opts,
  async fn() {
    const { code, lang } = block("@gatehouse/gatehouse/mail");
    const mailPort = Number(code.match(/http:\/\/127\.0\.0\.1:(\d+)/)?.[1]);
    assert.equal(mailPort, 8787, "the quick start points at deno task mail's default port");
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-readme-mail-" });
    const mail = await run(
      `import "${ROOT}lib/mail/standalone.ts";\n`,
      "ts",
      { PORT: "0", MAIL_DB: `file:${dir}/mail.db`, MAIL_BLOB_DIR: `${dir}/blobs` },
      "clone",
    );
    try {
      const [, origin] = await mail.waitFor(/Mail-scanning API on (http:\/\/127\.0\.0\.1:\d+)\//);
      const [, key] = await mail.waitFor(/sandbox API key:\s+(\S+)/);
      const client = await run(
        code.replace("http://127.0.0.1:8787", origin).replace("<API_KEY>", key),
        lang,
      );
      try {
        assert.equal((await client.done).code, 0, client.output());
        assert.equal(client.output().match(/^\d+ received$/gm)?.length, 3, client.output());
      } finally {
        await client.stop();
      }
    } finally {
      await mail.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "readme: the web server quick start serves its static response",
  ...opts,
  async fn() {
    const { code, lang } = block("@gatehouse/gatehouse/admin");
    const [admin, web] = [freePort(), freePort()];
    const app = await run(
      code.replace("127.0.0.1:2019", `127.0.0.1:${admin}`).replace(
        "127.0.0.1:8080",
        `127.0.0.1:${web}`,
      ),
      lang,
    );
    try {
      let body = "";
      for (let i = 0; i < 1200 && body !== "hello"; i++) {
        try {
          body = await (await fetch(`http://127.0.0.1:${web}/`)).text();
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      assert.equal(body, "hello", app.output());
      const config = await (await fetch(`http://127.0.0.1:${admin}/config/`)).json();
      assert.ok(config.apps.http.servers.web, "the admin API has the config");
    } finally {
      await app.stop();
    }
  },
});

/** Runs a command in `cwd`; fails the test with its output on a non-zero exit. */
async function sh(cmd: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = new TextDecoder();
  assert.ok(out.success, `${cmd} ${args.join(" ")}:\n${text.decode(out.stderr)}`);
  return text.decode(out.stdout);
}

const HAVE_NPM = await new Deno.Command("npm", { args: ["--version"], stdout: "null" }).output()
  .then((o) => o.success, () => false);

Deno.test({
  name:
    "readme: the npm install lines from a registry: the mirror alone, and the Preact quick start in Node with Preact 10 and 11",
  ignore: !HAVE_NPM,
  ...opts,
  async fn() {
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
      const npm = (dir: string, line: string) =>
        sh("npm", [
          ...line.split(/\s+/).slice(1),
          "--registry",
          registry.url,
          "--no-audit",
          "--no-fund",
        ], dir);
      const newApp = async () => {
        const dir = await tempDir("gatehouse-readme-npm-");
        await Deno.writeTextFile(
          `${dir}/package.json`,
          JSON.stringify({ name: "app", private: true, type: "module" }),
        );
        return dir;
      };

      const install = README.match(/`(npm install @gatehouse\/gatehouse)`/)?.[1];
      assert.ok(install, "README has the npm install line");
      const alone = await newApp();
      await npm(alone, install);
      const lock = JSON.parse(await Deno.readTextFile(`${alone}/package-lock.json`));
      assert.deepEqual(Object.keys(lock.packages).filter((k) => k !== ""), [
        "node_modules/@gatehouse/gatehouse",
      ]);

      const pagesLine = README.match(/`(npm install @gatehouse\/gatehouse preact [^`]+)`/)?.[1];
      assert.ok(pagesLine, "README says what to install for the sign-in pages on npm");
      const { code } = block("@gatehouse/gatehouse/preact");
      // the quick start as the app's TypeScript compiler emits it (Node runs no TSX)
      const js = ts.transpileModule(code, {
        compilerOptions: {
          jsx: ts.JsxEmit.ReactJSX,
          module: ts.ModuleKind.ESNext,
          target: ts.ScriptTarget.ES2022,
        },
      }).outputText;
      for (const preact of ["", "@10"]) {
        const app = await newApp();
        await npm(app, pagesLine.replace(" preact ", ` preact${preact} `));
        const installed = JSON.parse(
          await Deno.readTextFile(`${app}/node_modules/preact/package.json`),
        );
        assert.match(installed.version, preact ? /^10\./ : /^11\./);
        await Deno.writeTextFile(`${app}/main.mjs`, js);
        const html = await sh("node", ["main.mjs"], app);
        assert.match(html, /^<main style="[^"]+"><div style="[^"]+"><h1 [^>]*>Sign in<\/h1>/);
        assert.ok(html.includes('<form method="post" action="/api/auth/login">'), html);
        assert.ok(html.includes("background:#0b5"), html);
      }
    } finally {
      await registry.stop();
    }
  },
});
