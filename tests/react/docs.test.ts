/**
 * docs/react.md's code, including the Next.js-style example, type-checks against React 18's
 * and React 19's types (each under its own config), with the package's own entry points.
 */
import assert from "node:assert/strict";

const here = new URL(".", import.meta.url);
const doc = new URL("../../docs/react.md", import.meta.url).pathname;

for (const major of [18, 19]) {
  Deno.test(`docs/react.md type-checks against React ${major}`, async () => {
    const text = await Deno.readTextFile(doc);
    assert.match(text, /```tsx\n\/\/ app\/login\/login-form\.tsx\n"use client";/);
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "check",
        "--quiet",
        "--config",
        new URL(`react${major}.json`, here).pathname,
        "--doc-only",
        doc,
      ],
      env: { NO_COLOR: "1" },
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
  });
}
