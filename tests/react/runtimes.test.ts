/**
 * The same components in React 18, React 19, Preact 10 and Preact 11: every case of `_cases.ts`
 * is rendered by `react-dom/server` of each React version (in a child process under that
 * version's import map, type-checked against that version's types) and by
 * `preact-render-to-string` with Preact 11 (the project's) and Preact 10 (a child process under
 * `preact10.importmap.json`), and the HTML must be the same (see `_html.ts` for what "the same"
 * allows).
 */
import assert from "node:assert/strict";
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import * as preactBuild from "../../preact.ts";
import { cases } from "./_cases.ts";
import { canonical } from "./_html.ts";
import { reactFlags } from "./_flags.ts";

interface ReactRender {
  version: string;
  html: Record<string, string>;
  document: string;
  stderr: string;
}

const here = new URL(".", import.meta.url);

/** Renders the cases with the React build under `tests/react/react<major>.importmap.json`. */
export async function renderWithReact(major: 18 | 19): Promise<ReactRender> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--check",
      "--allow-env",
      "--allow-read",
      ...reactFlags(major),
      new URL("_render_react.tsx", here).pathname,
    ],
    cwd: Deno.cwd(),
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, `React ${major} render failed:\n${err}`);
  return { ...JSON.parse(new TextDecoder().decode(stdout)), stderr: err };
}

interface PreactRender {
  major: number;
  html: Record<string, string>;
  document: string;
  stderr: string;
}

/** Renders the cases with the Preact build under `tests/react/preact10.importmap.json`. */
export async function renderWithPreact10(): Promise<PreactRender> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      "--check",
      "--allow-env",
      "--allow-read",
      "--no-config",
      "--import-map",
      new URL("preact10.importmap.json", here).pathname,
      new URL("_render_preact.ts", here).pathname,
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(stderr);
  assert.equal(code, 0, `Preact 10 render failed:\n${err}`);
  return { ...JSON.parse(new TextDecoder().decode(stdout)), stderr: err };
}

function preactHtml(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, el] of Object.entries(cases(preactBuild, h as never))) {
    out[name] = renderToString(el as preact.VNode);
  }
  return out;
}

const reacts = Promise.all([renderWithReact(18), renderWithReact(19)]);
const preact10 = renderWithPreact10();

Deno.test("react-dom/server 18 and 19 render every case without a warning", async () => {
  const [r18, r19] = await reacts;
  assert.match(r18.version, /^18\./);
  assert.match(r19.version, /^19\./);
  const names = Object.keys(cases(preactBuild, h as never));
  for (const r of [r18, r19]) {
    assert.deepEqual(Object.keys(r.html), names);
    // React's development build reports invalid props, keys and nesting on stderr.
    assert.equal(r.stderr, "", `React ${r.version} warned:\n${r.stderr}`);
    assert.match(r.html["login (defaults)"], /<form [^>]*method="post"/);
    assert.equal(r.html["sso buttons (none)"], "");
  }
});

Deno.test("the project's Preact is 11; Preact 10 renders from its own import map", async () => {
  assert.equal((h("i", null) as { constructor?: unknown }).constructor, Symbol.for("pv"));
  assert.equal((await preact10).major, 10);
});

Deno.test("React 18, React 19, Preact 10 and Preact 11 render the same HTML for the same props", async () => {
  const [r18, r19] = await reacts;
  const p = preactHtml();
  for (const [name, html] of Object.entries(p)) {
    const want = canonical(html);
    assert.deepEqual(canonical(r18.html[name]), want, `React 18 differs from Preact: ${name}`);
    assert.deepEqual(canonical(r19.html[name]), want, `React 19 differs from Preact: ${name}`);
  }
  const p10 = await preact10;
  assert.equal(p10.major, 10);
  assert.equal(p10.stderr, "");
  for (const [name, html] of Object.entries(p)) {
    assert.deepEqual(canonical(p10.html[name]), canonical(html), `Preact 10 differs: ${name}`);
  }
  // The comparison sees real differences: a changed prop changes the canonical form.
  assert.notDeepEqual(canonical(p["login (defaults)"]), canonical(p["login (error in words)"]));
  assert.notDeepEqual(
    canonical(p["login (defaults)"]),
    canonical(p["login (defaults)"].replace("required ", 'required="false" ')),
  );
});

Deno.test("the React build's renderAuthDocument matches the Preact build's", async () => {
  const [r18, r19] = await reacts;
  const data = {
    page: "login" as const,
    props: { error: "<b>x</b>", next: "/n" },
    sso: { providers: ["github"] },
  };
  const p = preactBuild.renderAuthDocument(data, { scriptSrc: "/client.js" });
  assert.equal((await preact10).document, p, "Preact 10's renderAuthDocument");
  for (const r of [r18, r19]) {
    assert.deepEqual(
      canonical(r.document.replace(/^<!doctype html>/, "")),
      canonical(p.replace(/^<!doctype html>/, "")),
    );
    assert.ok(!r.document.includes("<b>"), "an undescribed error code is never echoed");
  }
});

Deno.test("canonical(): attribute order, boolean spelling and separators are erased, nothing else", () => {
  assert.deepEqual(
    canonical('<input a="1" required="" b="x&#x27;y"/><p>a<!-- -->b</p>'),
    canonical('<input b="x\'y" required a="1"><p>ab</p>'),
  );
  assert.notDeepEqual(canonical('<input a="1">'), canonical('<input a="2">'));
  assert.notDeepEqual(canonical("<p>a</p>"), canonical("<p>a </p>"));
  assert.notDeepEqual(canonical('<p style="a:1;b:2"></p>'), canonical('<p style="b:2;a:1"></p>'));
  assert.throws(() => canonical("<p>x<!-- hidden --></p>"));
});
