/**
 * `deno doc --lint` for `deno task check`, without the one warning Deno 2.9 gives on every run
 * that is not about this package: `@types/react`'s `index.d.ts` says
 * `/// <reference path="global.d.ts" />`, which TypeScript (and `deno check`) reads as the file
 * beside it, and `deno doc`'s module graph reads as a package named `global.d.ts` ("Failed
 * resolving types. Could not find package 'global.d.ts' from referrer ..."; denoland/deno#36751,
 * fixed in deno_graph, not yet in a Deno release). No setting of ours changes that: the line is
 * in the npm package, and a path reference inside an npm package is resolved by Node's rules,
 * not by the import map or `compilerOptions`. What `global.d.ts` declares (empty DOM interfaces
 * for React's event types) is not part of this package's documented API.
 *
 * A warning is left out only when it is exactly that misreading: a `/// <reference path>` to a
 * bare file name in an npm package's declaration file, the named file there beside it. Every
 * other line of Deno's output is printed; `--verbose` prints the left-out warnings too, saying
 * why; a failure prints everything, with Deno's exit code.
 *
 * ```sh
 * deno run -A scripts/doc_lint.ts *.ts             # "Checked 7 files"
 * deno run -A scripts/doc_lint.ts --verbose *.ts   # and the warnings left out
 * ```
 *
 * @module
 */

/** One message of `deno doc`'s output: its first line and the indented lines under it. */
export function splitMessages(output: string): string[][] {
  const messages: string[][] = [];
  for (const line of output.split("\n")) {
    if (line.trim() === "") continue;
    if (/^\s/.test(line) && messages.length > 0) messages.at(-1)!.push(line);
    else messages.push([line]);
  }
  return messages;
}

const MISREAD =
  /^Warning Failed resolving types\. Could not find package '([^'/\\]+\.d\.[cm]?ts)' from referrer '(file:\/\/[^']*\/node_modules\/[^']+\.d\.[cm]?ts)'\.$/;

/**
 * Whether a message is `deno doc` reading a `/// <reference path="x.d.ts" />` of an npm
 * package's declaration file as a package named `x.d.ts` (`read` gives a file's text, or null
 * when there is none): the referrer says so, and `x.d.ts` is there beside it.
 */
export function isMisreadPathReference(
  message: string[],
  read: (url: URL) => string | null,
): boolean {
  const m = message[0].match(MISREAD);
  if (!m) return false;
  const [, name, referrer] = m;
  const source = read(new URL(referrer));
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  if (source === null || !new RegExp(`^///\\s*<reference\\s+path="${escaped}"`, "m").test(source)) {
    return false;
  }
  return read(new URL(name, referrer)) !== null;
}

function readText(url: URL): string | null {
  try {
    return Deno.readTextFileSync(url);
  } catch {
    return null;
  }
}

if (import.meta.main) {
  const verbose = Deno.args.includes("--verbose");
  const files = Deno.args.filter((a) => a !== "--verbose");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...files],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  const output = text.decode(out.stdout) + text.decode(out.stderr);
  if (!out.success) {
    console.log(output.trimEnd());
    Deno.exit(out.code || 1);
  }
  const left: string[][] = [];
  for (const message of splitMessages(output)) {
    if (isMisreadPathReference(message, readText)) left.push(message);
    else console.log(message.join("\n"));
  }
  if (verbose && left.length > 0) {
    console.log(
      `left out: ${left.length} warning(s) of deno doc reading a /// <reference path> of an npm ` +
        "package as a package name (the file is there; deno check reads it right; " +
        "denoland/deno#36751):",
    );
    for (const message of left) console.log(message.join("\n"));
  }
}
