/**
 * Runs Caddy's Caddyfile adapt corpus (`../shared/caddyfile-corpus`, when present next to the
 * project) against `gatehouse adapt` and reports the counts per tier. Every `core` test must
 * pass; the other tiers report their counts and failures (the goals are 90% of `extended`
 * and 60% of `excluded`, and are checked too).
 */
import assert from "node:assert/strict";
import { ROOT } from "../fixtures/helpers.ts";

const CORPUS = new URL("../shared/caddyfile-corpus/", `file://${ROOT}`).pathname;
const present = (() => {
  try {
    return Deno.statSync(`${CORPUS}run.mjs`).isFile;
  } catch {
    return false;
  }
})();

async function runTier(
  tier: string,
): Promise<{ passed: string[]; failed: { name: string; reason: string }[] }> {
  const report = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const out = await new Deno.Command("node", {
      args: [
        `${CORPUS}run.mjs`,
        "--server",
        `${Deno.execPath()} run -A --config ${ROOT}deno.json ${ROOT}cli.ts`,
        "--tier",
        tier,
        "--strict-errors",
        "--jobs",
        "2",
        "--report",
        report,
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    return JSON.parse(await Deno.readTextFile(report));
  } finally {
    await Deno.remove(report);
  }
}

for (const [tier, goal] of [["core", 1], ["extended", 0.9], ["excluded", 0.6]] as const) {
  Deno.test({
    name: `caddyfile corpus, tier ${tier}: at least ${goal * 100}% pass`,
    ignore: !present,
    async fn() {
      const r = await runTier(tier);
      const total = r.passed.length + r.failed.length;
      console.log(`corpus ${tier}: ${r.passed.length} passed, ${r.failed.length} failed`);
      for (const f of r.failed) console.log(`  FAIL ${f.name}: ${f.reason}`);
      assert.ok(total > 0);
      assert.ok(
        r.passed.length >= Math.ceil(total * goal),
        `${tier}: ${r.passed.length}/${total} passed`,
      );
    },
  });
}
