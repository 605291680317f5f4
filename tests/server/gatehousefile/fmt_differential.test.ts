/**
 * `fmt` against Caddy 2.6.2's `caddy fmt` (the oracle installed here) on generated configs.
 * Generated configs avoid the two places where Caddy changed its formatter after 2.6.2
 * (heredocs; text inside backticks; a trailing space before a line that starts with a
 * placeholder).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { formatGatehousefile } from "../../../lib/server/caddyfile/formatter.ts";
import { gatehousefile } from "./_gen.ts";

async function caddyFmt(input: string): Promise<string> {
  const child = new Deno.Command("caddy", {
    args: ["fmt", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(input));
  await w.close();
  const out = await child.output();
  return new TextDecoder().decode(out.stdout);
}

const hasCaddy = (() => {
  try {
    return new Deno.Command("caddy", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();

Deno.test({
  name: "fmt differential: same output as caddy fmt (2.6.2) on generated configs",
  ignore: !hasCaddy,
  async fn() {
    const samples = fc.sample(gatehousefile, { numRuns: 120, seed: 12 });
    samples.push(
      "{\n\tdebug\n}\nimport common\n\n\n(common) {\n\tencode gzip\n}\na.com {\n\t# c\n\troute {\n\t\trespond 200\n\t}\n}",
      'a {\n\theader `x y` "q  r" \\{esc\\}\n}',
    );
    for (const s of samples) assert.equal(formatGatehousefile(s), await caddyFmt(s), s);
  },
});
