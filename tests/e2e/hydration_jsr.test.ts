/**
 * A Deno app on React 18 and the React build as JSR serves it (`hydration/jsr_form.ts`: its
 * React import pinned to `npm:react@^19.0.0`). Without the import map entries docs/react.md
 * gives, the app has two copies of React: when its lock file already holds its react-dom, the
 * pages stop with a message that names the two and the fix; when Deno resolves everything
 * afresh, it gives react-dom 18 the pages' React 19 (after a peer dependency warning) and
 * react-dom fails as it loads, before any page code runs. With the entries, one React 18
 * renders every page, exactly as the React 18 build of the source does. (`hydration.test.ts`
 * hydrates that app in Chromium.)
 */
import assert from "node:assert/strict";
import { REACT_FROM_JSR } from "../../lib/react/react_check.ts";
import { buildJsrForm, denoReact18Map, PUBLISHED_IMPORTS } from "./hydration/jsr_form.ts";

const CASES = new URL("../react/_cases.ts", import.meta.url).href;
const REACT18_MAP = new URL("../react/react18.importmap.json", import.meta.url).pathname;

/** The app: renders every case of `_cases.ts`, or one whole document, with react-dom/server. */
const APP = `// @ts-types="@types/react"
import { createElement, type ReactElement, version } from "react";
import { renderToString } from "react-dom/server";
import * as build from "@gatehouse/gatehouse/react";
import { cases } from "${CASES}";

if (Deno.args[0] === "document") {
  console.log(build.renderAuthDocument({ page: "login", props: {} }, { renderToString }));
} else {
  const html: Record<string, string> = {};
  for (const [name, element] of Object.entries(cases(build, createElement as never))) {
    html[name] = renderToString(element as ReactElement);
  }
  console.log(JSON.stringify({ version, html }));
}
`;

/** The app before it imported the pages: React 18 and react-dom only. */
const BEFORE = `import { createElement, version } from "react";
import { renderToString } from "react-dom/server";
console.log(version, renderToString(createElement("p", null, "hi")));
`;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** `deno run -A` (with `--quiet` unless `warnings`: it also silences Deno's npm warnings). */
async function deno(args: string[], cwd: string, warnings = false): Promise<Ran> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...(warnings ? [] : ["--quiet"]), "-A", ...args],
    cwd,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** A temp directory with the JSR form and the app; removed after `fn`. */
async function withApp(
  fn: (dir: string, jsr: { react: string; npm: string[] }) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-deno-react18-" });
  try {
    const jsr = await buildJsrForm(`${dir}/jsr`);
    await Deno.writeTextFile(`${dir}/app.tsx`, APP);
    await Deno.writeTextFile(`${dir}/before.tsx`, BEFORE);
    await fn(dir, jsr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const TWO_REACTS = new RegExp(
  "@gatehouse/gatehouse/react: .* a copy of React other than the one (it imports|the pages " +
    "import) \\(React 19\\.[^)]*\\); the app has two copies of React\\. A Deno app on React 18 " +
    "that imports the JSR package gets this",
);

Deno.test("the React build on JSR imports React 19, the specifier its error message names", async () => {
  await withApp((_dir, jsr) => {
    assert.deepEqual(jsr.npm, [PUBLISHED_IMPORTS["@types/react"], PUBLISHED_IMPORTS["react"]]);
    assert.equal(REACT_FROM_JSR, PUBLISHED_IMPORTS["react"]);
    return Promise.resolve();
  });
});

Deno.test("a React 18 app whose lock holds its react-dom: the pages name the two Reacts and the fix", async () => {
  await withApp(async (dir, jsr) => {
    const map = await denoReact18Map(`${dir}/map.json`, jsr.react, false);
    const { imports } = JSON.parse(await Deno.readTextFile(map));
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify({ imports }));
    const config = ["--config", `${dir}/deno.json`];
    const before = await deno([...config, "before.tsx"], dir);
    assert.equal(before.code, 0, before.stderr);
    assert.equal(before.stdout, "18.3.1 <p>hi</p>\n");
    const lock = JSON.parse(await Deno.readTextFile(`${dir}/deno.lock`));
    assert.equal(lock.specifiers["npm:react-dom@18.3.1"], "18.3.1_react@18.3.1");

    const pages = await deno([...config, "app.tsx"], dir);
    assert.equal(pages.code, 1, pages.stdout + pages.stderr);
    assert.match(pages.stderr, TWO_REACTS);
    assert.match(
      pages.stderr,
      /is being rendered by a copy of React other than the one it imports/,
    );
    assert.ok(
      pages.stderr.includes(
        `Map that specifier to the app's React in deno.json ("imports": {"${REACT_FROM_JSR}": ` +
          `"npm:react@<the app's version>"})`,
      ),
      pages.stderr,
    );
    assert.equal(pages.stdout, "");
    const document = await deno([...config, "app.tsx", "document"], dir);
    assert.equal(document.code, 1, document.stdout + document.stderr);
    assert.match(document.stderr, TWO_REACTS);
    assert.match(document.stderr, /the renderToString given to renderAuthDocument belongs to/);
  });
});

Deno.test("a React 18 app resolved afresh: Deno gives react-dom 18 the pages' React 19", async () => {
  await withApp(async (dir, jsr) => {
    const map = await denoReact18Map(`${dir}/map.json`, jsr.react, false);
    const r = await deno(["--no-config", "--import-map", map, "app.tsx"], dir, true);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /react-dom@18\.3\.1 .*\n.*peer react@\^18\.3\.1: resolved to 19\./);
    assert.match(r.stderr, /reading 'ReactCurrentDispatcher'/);
    assert.equal(r.stdout, "");
  });
});

Deno.test("a React 18 app with the import map entries: one React 18 renders the pages as the source build", async () => {
  await withApp(async (dir, jsr) => {
    const map = await denoReact18Map(`${dir}/map.json`, jsr.react, true);
    const r = await deno(["--check", "--no-config", "--import-map", map, "app.tsx"], dir, true);
    assert.equal(r.code, 0, r.stderr);
    // no second React: no peer dependency warning, no invalid hook call, no React warning
    assert.equal(r.stderr.replace(/^Check .*\n/gm, ""), "");
    const source = await deno(["--no-config", "--import-map", REACT18_MAP, "app.tsx"], dir);
    assert.equal(source.code, 0, source.stderr);
    const got = JSON.parse(r.stdout);
    const want = JSON.parse(source.stdout);
    assert.equal(got.version, "18.3.1");
    assert.ok(Object.keys(want.html).length > 10);
    assert.deepEqual(got, want);
  });
});
