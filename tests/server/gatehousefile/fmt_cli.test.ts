/** `gatehouse fmt` as a process: default file, stdin, --overwrite, --diff, exit codes. */
import assert from "node:assert/strict";
import { runCli, spawnCli, tempEnv } from "../fixtures/helpers.ts";

const MESSY = "a.com{\nrespond   hi\n}";
const CLEAN = "a.com {\n\trespond hi\n}\n";

Deno.test("fmt: default Gatehousefile in the current directory; exit 1 when unformatted", async () => {
  const t = await tempEnv();
  try {
    await Deno.writeTextFile(`${t.dir}/Gatehousefile`, MESSY);
    const r = await runCli(["fmt"], t.env, t.dir);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, CLEAN);
    assert.match(r.out, /Gatehousefile:1: input is not formatted/);
    assert.equal(await Deno.readTextFile(`${t.dir}/Gatehousefile`), MESSY); // untouched

    await Deno.writeTextFile(`${t.dir}/Gatehousefile`, CLEAN);
    const ok = await runCli(["fmt"], t.env, t.dir);
    assert.equal(ok.code, 0);
    assert.equal(ok.stdout, CLEAN);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("fmt: --overwrite rewrites the file and exits 0; refuses stdin", async () => {
  const t = await tempEnv();
  try {
    const file = `${t.dir}/site.caddyfile`;
    await Deno.writeTextFile(file, MESSY);
    const r = await runCli(["fmt", "-w", file], t.env, t.dir);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.stdout, "");
    assert.equal(await Deno.readTextFile(file), CLEAN);
    const bad = await runCli(["fmt", "--overwrite", "-"], t.env, t.dir);
    assert.equal(bad.code, 1);
    assert.match(bad.out, /--overwrite needs a regular file/);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("fmt: --diff prints a line diff; - reads stdin", async () => {
  const t = await tempEnv();
  try {
    await Deno.writeTextFile(`${t.dir}/Caddyfile`, MESSY);
    const d = await runCli(["fmt", "--diff", "Caddyfile"], t.env, t.dir);
    assert.equal(d.code, 1);
    assert.equal(
      d.stdout,
      "- a.com{\n- respond   hi\n+ a.com {\n+ \trespond hi\n  }\n+ \n",
    );
    const p = spawnCli(["fmt", "-"], t.env, t.dir, true);
    const w = p.child.stdin.getWriter();
    await w.write(new TextEncoder().encode(MESSY));
    await w.close();
    assert.equal((await p.status).code, 1);
    assert.equal(p.stdout(), CLEAN);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});

Deno.test("fmt: no file to format is a usage error naming what to do", async () => {
  const t = await tempEnv();
  try {
    const r = await runCli(["fmt"], t.env, t.dir);
    assert.equal(r.code, 1);
    assert.match(r.out, /no Gatehousefile or Caddyfile in the current directory/);
    const two = await runCli(["fmt", "a", "b"], t.env, t.dir);
    assert.equal(two.code, 1);
    assert.match(two.out, /one file at a time/);
  } finally {
    await Deno.remove(t.dir, { recursive: true });
  }
});
