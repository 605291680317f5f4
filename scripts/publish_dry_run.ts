/**
 * `deno publish --dry-run` for `deno task check`, quiet when it succeeds: Deno lists every file
 * it would upload (about 500 lines); this prints one line with their number and size instead,
 * and passes on whatever else Deno said (warnings, the slow-type check). `--verbose` prints
 * Deno's whole output; a failure always does, with Deno's exit code.
 *
 * ```sh
 * deno run -A scripts/publish_dry_run.ts            # "publish dry run: 512 files, 3.1 MB"
 * deno run -A scripts/publish_dry_run.ts --verbose  # and each file
 * ```
 *
 * @module
 */

const root = decodeURIComponent(new URL("../", import.meta.url).pathname);

/** The file lines of a dry run's output (`   file:///... (2.3KB)`), and the other lines. */
export function splitDryRun(
  output: string,
): { files: { path: string; size: string }[]; rest: string[] } {
  const files: { path: string; size: string }[] = [];
  const rest: string[] = [];
  for (const line of output.split("\n")) {
    const m = line.match(/^\s+(file:\/\/\S+) \(([\d.]+[KMG]?B)\)$/);
    if (m) files.push({ path: m[1], size: m[2] });
    else if (line.trim() !== "") rest.push(line);
  }
  return { files, rest };
}

/** Bytes of a size as Deno writes it (`2.3KB`, `1.2MB`, `43B`). */
export function sizeBytes(size: string): number {
  const m = size.match(/^([\d.]+)([KMG]?)B$/);
  if (!m) return 0;
  const unit = ({ "": 1, K: 1e3, M: 1e6, G: 1e9 } as Record<string, number>)[m[2]];
  return Math.round(Number(m[1]) * unit);
}

if (import.meta.main) {
  const verbose = Deno.args.includes("--verbose");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: root,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  const output = text.decode(out.stdout) + text.decode(out.stderr);
  if (!out.success || verbose) {
    console.log(output.trimEnd());
    if (!out.success) Deno.exit(out.code || 1);
  } else {
    const { files, rest } = splitDryRun(output);
    const kept = rest.filter((l) =>
      !/^(Check |Checking for slow types|Simulating publish of |Success Dry run complete)/.test(
        l.trim(),
      )
    );
    for (const line of kept) console.log(line);
    const mb = files.reduce((n, f) => n + sizeBytes(f.size), 0) / 1e6;
    console.log(
      `publish dry run: ${files.length} files, ${mb.toFixed(1)} MB, no slow types ` +
        "(--verbose lists the files)",
    );
  }
}
