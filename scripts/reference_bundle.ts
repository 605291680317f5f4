/**
 * Writes the mail API reference's renderer into the source tree: the browser bundle of npm
 * `@scalar/api-reference` (`dist/browser/standalone.js`), gzip-compressed, as
 * `lib/mail/scalar/standalone.js.gz`, with its licence beside it (`lib/mail/scalar/LICENSE`).
 * `lib/mail/reference_page.ts` serves that file as it is to browsers that accept gzip, so the
 * program installs nothing for the reference page: the package (about 280 MB with Vue,
 * CodeMirror, tailwind, ...) is imported by `tests/deno.json` alone, at the version this script
 * copies. Run it after changing that version; `tests/mail/reference_runtime.test.ts` checks that
 * the file is the locked version's bundle, unchanged.
 *
 * ```sh
 * deno run -A --config tests/deno.json scripts/reference_bundle.ts
 * ```
 *
 * @module
 */
import { gzipSync } from "node:zlib";

const root = new URL("../", import.meta.url);

/** Where the carried renderer lives, relative to the project root. */
export const BUNDLE_DIR = "lib/mail/scalar";

/** The installed package's directory (tests/node_modules, from `tests/deno.json`). */
export function scalarPackageDir(): URL {
  const resolved = import.meta.resolve("@scalar/api-reference/style.css");
  if (!resolved.startsWith("file:")) {
    throw new Error(
      `@scalar/api-reference resolves to ${resolved}: run with --config tests/deno.json ` +
        "(whose node_modules holds it)",
    );
  }
  return new URL("../", resolved);
}

/** The notice of the carried renderer (MIT, as the package's `license` and its repository). */
export function scalarNotice(version: string): string {
  return `standalone.js.gz is the browser bundle of the npm package @scalar/api-reference
${version} (https://github.com/scalar/scalar, packages/api-reference), dist/browser/standalone.js,
gzip-compressed, otherwise unchanged. The libraries bundled in it keep their own notices inline.

MIT License

Copyright (c) 2023-present Scalar

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
`;
}

if (import.meta.main) {
  const pkg = scalarPackageDir();
  const { version } = JSON.parse(await Deno.readTextFile(new URL("package.json", pkg)));
  const bundle = await Deno.readFile(new URL("dist/browser/standalone.js", pkg));
  const gz = gzipSync(bundle, { level: 9 });
  const dir = new URL(`${BUNDLE_DIR}/`, root);
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeFile(new URL("standalone.js.gz", dir), gz);
  await Deno.writeTextFile(new URL("LICENSE", dir), scalarNotice(version));
  console.log(
    `${BUNDLE_DIR}/standalone.js.gz: @scalar/api-reference ${version}, ` +
      `${bundle.length} bytes, ${gz.length} gzip-compressed`,
  );
}
