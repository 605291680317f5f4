/**
 * Which UI library each entry point loads: the core none (nor any package or Node built-in),
 * the React build only `react`, the Preact build only Preact. Read from `deno info --json`
 * (the real module graph).
 */
import assert from "node:assert/strict";

interface Graph {
  modules: {
    specifier: string;
    kind?: string;
    dependencies?: { specifier: string; code?: { specifier?: string } }[];
  }[];
}

async function graphOf(entry: string): Promise<Graph> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "info",
      "--json",
      "--node-modules-dir=none", // npm: specifiers, not the paths of a node_modules
      new URL(`../../${entry}`, import.meta.url).pathname,
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  return JSON.parse(new TextDecoder().decode(stdout)) as Graph;
}

async function npmPackages(entry: string): Promise<string[]> {
  const info = await graphOf(entry);
  const names = info.modules
    .filter((m) => m.specifier.startsWith("npm:"))
    .map((m) => m.specifier.replace(/^npm:\/?/, "").replace(/^(@?[^@/]+(?:\/[^@/]+)?)@.*$/, "$1"));
  return [...new Set(names)].sort();
}

const UI = ["react", "react-dom", "preact", "preact-render-to-string", "@types/react"];

Deno.test("mod.ts (the core) loads no UI library", async () => {
  const used = await npmPackages("mod.ts");
  assert.deepEqual(used.filter((n) => UI.includes(n)), []);
});

Deno.test("mod.ts (the core) depends on no npm:, jsr: or node: module: only its own files", async () => {
  const root = new URL("../../", import.meta.url).href;
  const foreign: string[] = [];
  for (const m of (await graphOf("mod.ts")).modules) {
    if (!m.specifier.startsWith(root)) foreign.push(m.specifier);
    for (const d of m.dependencies ?? []) {
      for (const s of new Set([d.specifier, d.code?.specifier ?? ""])) {
        if (/^(npm|jsr|node):/.test(s)) foreign.push(`${m.specifier} imports ${s}`);
      }
    }
  }
  assert.deepEqual(foreign, []);
});

Deno.test("react.ts loads react and nothing of preact or react-dom", async () => {
  const used = await npmPackages("react.ts");
  assert.deepEqual(used.filter((n) => UI.includes(n)), ["@types/react", "react"]);
});

Deno.test("preact.ts loads preact and nothing of react", async () => {
  const used = await npmPackages("preact.ts");
  assert.deepEqual(used.filter((n) => UI.includes(n)), ["preact", "preact-render-to-string"]);
});
