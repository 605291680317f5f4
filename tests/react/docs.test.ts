/**
 * docs/react.md's code, including the Next.js-style example, type-checks against React 18's
 * and React 19's types, with the package's own entry points (`deno check` under
 * each version's import map): each `ts`/`tsx` block is written to a file of its own and
 * checked. Without a config there is no JSX setting, so `tsx` blocks start with the JSX
 * pragmas that a Next.js tsconfig stands for.
 */
import assert from "node:assert/strict";
import { reactFlags } from "./_flags.ts";

const doc = new URL("../../docs/react.md", import.meta.url);
const PRAGMAS = "/** @jsxImportSource react */\n/** @jsxImportSourceTypes @types/react */\n";

for (const major of [18, 19] as const) {
  Deno.test(`docs/react.md type-checks against React ${major}`, async () => {
    const text = await Deno.readTextFile(doc);
    assert.match(text, /```tsx\n\/\/ app\/login\/login-form\.tsx\n"use client";/);
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-docs-" });
    try {
      const files: string[] = [];
      for (const [i, m] of [...text.matchAll(/```(tsx?)\n([\s\S]*?)```/g)].entries()) {
        const file = `${dir}/block${i}.${m[1]}`;
        await Deno.writeTextFile(file, (m[1] === "tsx" ? PRAGMAS : "") + m[2]);
        files.push(file);
      }
      assert.ok(files.length >= 5, "the code blocks were found");
      const { code, stderr } = await new Deno.Command(Deno.execPath(), {
        args: ["check", "--quiet", ...reactFlags(major), ...files],
        cwd: dir,
        env: { NO_COLOR: "1" },
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.equal(code, 0, new TextDecoder().decode(stderr));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
