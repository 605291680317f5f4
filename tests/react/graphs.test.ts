/**
 * Which UI library each entry point loads: the core none, the React build only `react`, the
 * Preact build only Preact. Read from `deno info --json` (the real module graph).
 */
import assert from "node:assert/strict";

async function npmPackages(entry: string): Promise<string[]> {
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
  const info = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: { specifier: string; kind?: string }[];
  };
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

Deno.test("react.ts loads react and nothing of preact or react-dom", async () => {
  const used = await npmPackages("react.ts");
  assert.deepEqual(used.filter((n) => UI.includes(n)), ["@types/react", "react"]);
});

Deno.test("preact.ts loads preact and nothing of react", async () => {
  const used = await npmPackages("preact.ts");
  assert.deepEqual(used.filter((n) => UI.includes(n)), ["preact", "preact-render-to-string"]);
});
