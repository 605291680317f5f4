/**
 * Deno apps on Preact 11 and Preact 10 with the Preact build as JSR serves it
 * (`hydration/jsr_form.ts`: its Preact imports pinned to `npm:preact@^11.2.0`). A Preact 11 app,
 * what `deno add npm:preact` gives, shares its Preact with the pages and renders them as the
 * source build does. A Preact 10 app maps the pinned specifiers to its own Preact, as
 * docs/react.md says, and then renders them as the source build does under Preact 10. Without
 * the entries it has two copies of Preact, and Deno gives the app's `preact-render-to-string`
 * the highest of them, the pages' Preact 11 (even when the lock held it with Preact 10), which
 * would skip the app's own Preact 10 elements and render every page as `""`: the pages stop
 * that render with a message that names the two copies and the fix.
 */
import assert from "node:assert/strict";
import { h, type VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import * as build from "../../preact.ts";
import { PREACT_FROM_JSR, PREACT_HOOKS_FROM_JSR } from "../../lib/react/preact_check.ts";
import { cases } from "../react/_cases.ts";
import { buildJsrForm, PUBLISHED_IMPORTS } from "./hydration/jsr_form.ts";

const CASES = new URL("../react/_cases.ts", import.meta.url).href;
const PREACT10 = "npm:preact@10.29.8";

/** The app: renders every case of `_cases.ts`, and one whole document, with its Preact. */
const APP = `import { h, type VNode } from "preact";
import { renderToString } from "preact-render-to-string";
import * as build from "@gatehouse/gatehouse/preact";
import { cases } from "${CASES}";

const mark = (h("i", null) as { constructor?: unknown }).constructor;
const major = mark === undefined ? 10 : mark === Symbol.for("pv") ? 11 : null;
const html: Record<string, string> = {};
for (const [name, element] of Object.entries(cases(build, h as never))) {
  html[name] = renderToString(element as VNode);
}
const document = Deno.args[0] === "document"
  ? build.renderAuthDocument({ page: "login", props: {} })
  : "";
console.log(JSON.stringify({ major, html, document }));
`;

/** The app before it imported the pages: Preact 10 and its renderer only. */
const BEFORE = `import { h } from "preact";
import { renderToString } from "preact-render-to-string";
console.log(renderToString(h("p", null, "hi")));
`;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function deno(args: string[], cwd: string): Promise<Ran> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "-A", "--config", `${cwd}/deno.json`, ...args],
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/**
 * A temp directory with the JSR form of `preact.ts`, the app, and a `deno.json` whose imports
 * are what `deno add jsr:@gatehouse/gatehouse npm:preact@<preact> npm:preact-render-to-string`
 * writes (the package's subpath mapped to the JSR form), plus `extra`.
 */
async function withApp(
  preact: string,
  extra: Record<string, string>,
  fn: (dir: string, npm: string[]) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-deno-preact-" });
  try {
    const { npm } = await buildJsrForm(`${dir}/jsr`, ["preact.ts"]);
    await Deno.writeTextFile(`${dir}/app.ts`, APP);
    await Deno.writeTextFile(`${dir}/before.ts`, BEFORE);
    const imports = {
      "@gatehouse/gatehouse/preact": new URL(`file://${dir}/jsr/preact.ts`).href,
      "preact": preact,
      "preact-render-to-string": "npm:preact-render-to-string@^6.8.2",
      ...extra,
    };
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ imports }));
    await fn(dir, npm);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The source build's HTML of every case, with the project's Preact (11). */
function sourceHtml(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, element] of Object.entries(cases(build, h as never))) {
    out[name] = renderToString(element as VNode);
  }
  return out;
}

const TWO_PREACTS = new RegExp(
  "@gatehouse/gatehouse/preact: a renderer of Preact 11 \\(the one the pages import\\) was " +
    "given an element of Preact 10; the app has two copies of Preact",
);

Deno.test("the Preact build on JSR imports Preact 11, the specifiers its error message names", async () => {
  await withApp("npm:preact@^11.2.0", {}, (_dir, npm) => {
    assert.equal(PUBLISHED_IMPORTS["preact"], PREACT_FROM_JSR);
    assert.equal(`${PUBLISHED_IMPORTS["preact/"]}hooks`, PREACT_HOOKS_FROM_JSR);
    assert.deepEqual(
      npm,
      [
        PREACT_FROM_JSR,
        PREACT_HOOKS_FROM_JSR,
        PUBLISHED_IMPORTS["preact-render-to-string"],
      ].sort(),
    );
    return Promise.resolve();
  });
});

Deno.test("a Preact 11 app (deno add npm:preact) renders the pages of the JSR package as the source build", async () => {
  await withApp("npm:preact@^11.2.0", {}, async (dir) => {
    const r = await deno(["--check", "app.ts", "document"], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const got = JSON.parse(r.stdout);
    assert.equal(got.major, 11);
    assert.deepEqual(got.html, sourceHtml());
    assert.equal(got.document, build.renderAuthDocument({ page: "login", props: {} }));
    const lock = JSON.parse(await Deno.readTextFile(`${dir}/deno.lock`));
    const preacts = Object.keys(lock.npm).filter((k) => k.startsWith("preact@"));
    assert.equal(preacts.length, 1, preacts.join(", "));
  });
});

Deno.test("a Preact 10 app with the import map entries: one Preact 10 renders the pages as the source build", async () => {
  const source = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "-A",
      "--no-config",
      "--import-map",
      new URL("../react/preact10.importmap.json", import.meta.url).pathname,
      new URL("../react/_render_preact.ts", import.meta.url).pathname,
    ],
    stdout: "piped",
  }).output();
  assert.ok(source.success);
  const want = JSON.parse(new TextDecoder().decode(source.stdout));
  assert.equal(want.major, 10);
  const remap = {
    [PREACT_FROM_JSR]: PREACT10,
    [PREACT_HOOKS_FROM_JSR]: "npm:/preact@10.29.8/hooks",
  };
  await withApp(PREACT10, remap, async (dir) => {
    const r = await deno(["--check", "app.ts"], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    const got = JSON.parse(r.stdout);
    assert.equal(got.major, 10);
    assert.deepEqual(got.html, want.html);
    const lock = JSON.parse(await Deno.readTextFile(`${dir}/deno.lock`));
    const preacts = Object.keys(lock.npm).filter((k) => k.startsWith("preact@"));
    assert.deepEqual(preacts.map((k) => k.split("_")[0]), ["preact@10.29.8"]);
  });
});

Deno.test("a Preact 10 app that maps after its lock was written: the pages say to delete the lock", async () => {
  await withApp(PREACT10, {}, async (dir) => {
    const unmapped = await deno(["app.ts"], dir);
    assert.equal(unmapped.code, 1);
    const config = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`));
    config.imports[PREACT_FROM_JSR] = PREACT10;
    config.imports[PREACT_HOOKS_FROM_JSR] = "npm:/preact@10.29.8/hooks";
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify(config));
    const stale = await deno(["app.ts"], dir);
    assert.equal(stale.code, 1, stale.stdout);
    assert.match(
      stale.stderr,
      /its preact-render-to-string is bound to another copy of Preact than the pages' Preact 10, and renders nothing of them.*delete deno\.lock and run again/,
    );
    await Deno.remove(`${dir}/deno.lock`);
    const fixed = await deno(["app.ts"], dir);
    assert.equal(fixed.code, 0, fixed.stderr);
    assert.equal(JSON.parse(fixed.stdout).major, 10);
  });
});

for (const lockFirst of [false, true]) {
  const how = lockFirst ? "whose lock already holds its renderer" : "resolved afresh";
  Deno.test(`a Preact 10 app without the entries, ${how}: the pages name the two Preacts and the fix`, async () => {
    await withApp(PREACT10, {}, async (dir) => {
      if (lockFirst) {
        const before = await deno(["before.ts"], dir);
        assert.equal(before.code, 0, before.stderr);
        assert.equal(before.stdout, "<p>hi</p>\n");
      }
      const pages = await deno(["app.ts"], dir);
      assert.equal(pages.code, 1, pages.stdout + pages.stderr);
      assert.match(pages.stderr, TWO_PREACTS);
      assert.ok(
        pages.stderr.includes(
          `Map that specifier to the app's Preact in deno.json ("imports": {"${PREACT_FROM_JSR}": ` +
            `"npm:preact@<the app's version>", "${PREACT_HOOKS_FROM_JSR}": ` +
            `"npm:/preact@<the app's version>/hooks"})`,
        ),
        pages.stderr,
      );
      assert.equal(pages.stdout, "");
      // Deno gave the app's renderer the highest Preact of the graph, the pages' 11, even when
      // the lock held it with Preact 10: the app's own elements are what it is given.
      const lock = JSON.parse(await Deno.readTextFile(`${dir}/deno.lock`));
      assert.equal(lock.specifiers["npm:preact-render-to-string@^6.8.2"], "6.8.2_preact@11.2.0");
    });
  });
}
