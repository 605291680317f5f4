/**
 * Quiet success: the publish dry run and the doc lint of `deno task check` and
 * `deno task build:npm` print a summary when they succeed (`--verbose` for the details), not
 * Deno's ~500-line file list, `deno doc`'s misread `@types/react` reference or TypeScript's
 * hundreds of expected diagnostics.
 */
import assert from "node:assert/strict";
import { sizeBytes, splitDryRun } from "../../scripts/publish_dry_run.ts";
import { isMisreadPathReference, splitMessages } from "../../scripts/doc_lint.ts";
import { ROOT } from "./_configs.ts";

async function run(args: string[]): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  return { code: o.code, out: text.decode(o.stdout) + text.decode(o.stderr) };
}

Deno.test("splitDryRun: the file lines of deno publish --dry-run and the rest", () => {
  const { files, rest } = splitDryRun(
    "Checking for slow types in the public API...\n" +
      "Simulating publish of @gatehouse/gatehouse@0.2.0 with files:\n" +
      "   file:///x/mod.ts (2.03KB)\n   file:///x/lib/a.js.gz (1.2MB)\n   file:///x/c (43B)\n" +
      "Warning something to see\nSuccess Dry run complete\n",
  );
  assert.deepEqual(files.map((f) => f.size), ["2.03KB", "1.2MB", "43B"]);
  assert.deepEqual(rest, [
    "Checking for slow types in the public API...",
    "Simulating publish of @gatehouse/gatehouse@0.2.0 with files:",
    "Warning something to see",
    "Success Dry run complete",
  ]);
  assert.equal(sizeBytes("2.03KB"), 2030);
  assert.equal(sizeBytes("1.2MB"), 1_200_000);
  assert.equal(sizeBytes("43B"), 43);
});

Deno.test("the check task's publish dry run prints one line when it succeeds", async () => {
  const quiet = await run([
    "run",
    "-A",
    "--config",
    "tests/deno.json",
    "scripts/publish_dry_run.ts",
  ]);
  assert.equal(quiet.code, 0, quiet.out);
  assert.match(
    quiet.out,
    /^publish dry run: \d{3,} files, [\d.]+ MB, no slow types \(--verbose lists the files\)\n$/,
  );
});

Deno.test("isMisreadPathReference: deno doc's misread /// <reference path> only, the file there", () => {
  const referrer = "file:///p/node_modules/.deno/@types+react@19.3.0/node_modules/@types/react/" +
    "index.d.ts";
  const output = "Warning Failed resolving types. Could not find package 'global.d.ts' from " +
    `referrer '${referrer}'.\n    at ${referrer}:5:21\nWarning something else\nChecked 7 files\n`;
  const messages = splitMessages(output);
  assert.deepEqual(messages.map((m) => m.length), [2, 1, 1]);
  const files: Record<string, string> = {
    [referrer]: '// a comment\n\n/// <reference path="global.d.ts" />\nimport "csstype";\n',
    [new URL("global.d.ts", referrer).href]: "interface Event {}\n",
  };
  const read = (url: URL) => files[url.href] ?? null;
  assert.equal(isMisreadPathReference(messages[0], read), true);
  assert.equal(isMisreadPathReference(messages[1], read), false);
  assert.equal(isMisreadPathReference(messages[2], read), false);
  // the named file missing, or no such reference in the referrer: a warning to see
  const missing = (url: URL) => url.href.endsWith("/global.d.ts") ? null : read(url);
  assert.equal(isMisreadPathReference(messages[0], missing), false);
  const noReference = (url: URL) => url.href === referrer ? 'import "csstype";\n' : read(url);
  assert.equal(isMisreadPathReference(messages[0], noReference), false);
  // a file of the project (not in node_modules) is never left out
  const own = [messages[0][0].replace("/node_modules/.deno/@types+react@19.3.0/node_modules", "")];
  assert.equal(isMisreadPathReference(own, read), false);
});

Deno.test("the check task's doc lint prints Deno's summary alone when it succeeds; --verbose the rest", async () => {
  const doc = ["run", "-A", "--config", "tests/deno.json", "scripts/doc_lint.ts"];
  // react.ts: the entry point whose graph holds @types/react
  const quiet = await run([...doc, "react.ts"]);
  assert.equal(quiet.code, 0, quiet.out);
  assert.equal(quiet.out, "Checked 1 file\n");
  const verbose = await run([...doc, "--verbose", "react.ts"]);
  assert.equal(verbose.code, 0, verbose.out);
  assert.match(verbose.out, /left out: 1 warning\(s\) .*denoland\/deno#36751/);
  assert.match(verbose.out, /Could not find package 'global\.d\.ts'/);
});

Deno.test("build:npm prints a summary when it succeeds; --verbose adds the diagnostics", async () => {
  const out = await Deno.makeTempDir({ prefix: "gatehouse-quiet-npm-" });
  try {
    const args = [
      "run",
      "-A",
      "--config",
      "tests/deno.json",
      "scripts/build_npm.ts",
      "--out",
      out,
      "--no-install",
    ];
    const quiet = await run(args);
    assert.equal(quiet.code, 0, quiet.out);
    const lines = quiet.out.trimEnd().split("\n");
    assert.ok(lines.length <= 2, quiet.out);
    assert.match(lines[0], /-> \d+ files, \d+ optional peer dependencies/);
    assert.doesNotMatch(quiet.out, /error TS\d+/);
    const verbose = await run([...args, "--verbose"]);
    assert.equal(verbose.code, 0, verbose.out);
    if (lines[1]) {
      assert.match(lines[1], /TypeScript diagnostics, not fatal .*--verbose lists them/);
      assert.match(verbose.out, /error TS\d+/);
    }
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
