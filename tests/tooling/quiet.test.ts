/**
 * Quiet success: the publish dry run of `deno task check` and `deno task build:npm` print a
 * summary when they succeed (`--verbose` for the details), not Deno's ~500-line file list or
 * TypeScript's hundreds of expected diagnostics.
 */
import assert from "node:assert/strict";
import { sizeBytes, splitDryRun } from "../../scripts/publish_dry_run.ts";
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
