/**
 * Where the interactive reference's renderer cannot be found, `reference.js` answers 503 with
 * what to do on the runtime at hand. Deno programs outside this repository (a project of their
 * own, as a JSR user has) import the reference's module by path: without a node_modules
 * directory the advice is to make one; with the package not mapped at all, `deno install`. (The
 * npm advice is tested in Node: tests/npm/mail_reference.test.mjs.)
 */
import assert from "node:assert/strict";

const MODULE = new URL("../../lib/mail/reference_page.ts", import.meta.url).href;
const HONO = "npm:hono@^4.13.19";

/** Runs a probe in a fresh Deno project with `config`; returns the script's status and text. */
async function probe(config: Record<string, unknown>): Promise<{ status: number; text: string }> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-reference-runtime-" });
  try {
    await Deno.writeTextFile(`${dir}/deno.json`, JSON.stringify(config));
    await Deno.writeTextFile(
      `${dir}/probe.ts`,
      `import { referenceRouter } from ${JSON.stringify(MODULE)};
const r = await referenceRouter("/api/account-docs/v2").request("/assets/reference.js");
console.log(JSON.stringify({ status: r.status, text: await r.text() }));
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "probe.ts"],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    return JSON.parse(stdout.trim().split("\n").at(-1)!);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("reference: on Deno without a node_modules directory, the 503 says to make one", async () => {
  const r = await probe({
    imports: { hono: HONO, "@scalar/api-reference": "npm:@scalar/api-reference@^1.72.1" },
  });
  assert.equal(r.status, 503);
  assert.match(r.text, /set "nodeModulesDir": "auto" in deno\.json/);
  assert.match(r.text, /deno add npm:@scalar\/api-reference/);
  assert.match(r.text, /The OpenAPI document is served at \/api\/account-docs\/v2\/openapi\.json/);
  assert.doesNotMatch(r.text, /npm install/);
});

Deno.test("reference: on Deno with the package not installed, the 503 says `deno install`", async () => {
  const r = await probe({ imports: { hono: HONO } });
  assert.equal(r.status, 503);
  assert.match(r.text, /run `deno install`/);
  assert.doesNotMatch(r.text, /npm install|nodeModulesDir/);
});

Deno.test("reference: in this project (node_modules from `deno install`) the renderer is served", async () => {
  const { referenceRouter } = await import("../../lib/mail/reference_page.ts");
  const r = await referenceRouter("/api/account-docs/v2").request("/assets/reference.js");
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^text\/javascript/);
  assert.ok((await r.text()).includes("createApiReference"));
});
