/**
 * Gatehousefile adapter benchmark: a generated 10,000-site Gatehousefile (root, encode, a
 * named matcher, reverse_proxy, header, file_server per site; every tenth site plain HTTP;
 * a global email so the TLS app gets policies).
 *
 * - `deno bench -A bench/gatehousefile_bench.ts` (or `deno task bench`): adapting in process.
 * - `deno run -A bench/gatehousefile_bench.ts`, from the project root: prints the in-process
 *   p50, checks that both command lines adapt the file, then times `gatehouse adapt` against
 *   `caddy adapt` (Caddy 2.6.2) on the same file in one hyperfine run (5 runs each, 1 warm-up)
 *   and prints the means and their ratio.
 *
 * Needs, for the command-line comparison: `hyperfine` and `caddy` on the PATH (Debian:
 * `apt-get install -y hyperfine caddy`); without them it says so and measures in process
 * only. The generated file is written to a temporary folder, removed at the end;
 * `GATEHOUSEFILE_BENCH_SITES=50` makes a small file, to check the script itself quickly.
 *
 * @module
 */
import "../lib/server/standard.ts";
import { adaptGatehousefile } from "../lib/server/adapters/gatehousefile/mod.ts";

/** A Gatehousefile with `sites` sites. */
export function generateSites(sites: number): string {
  const lines: string[] = ["{", "\temail ops@example.com", "}", ""];
  for (let i = 0; i < sites; i++) {
    if (i % 10 === 0) {
      lines.push(`http://plain${i}.example.net {`, `\trespond "site ${i}"`, "}", "");
      continue;
    }
    lines.push(
      `site${i}.example.com, www.site${i}.example.com {`,
      `\troot * /srv/site${i}`,
      "\tencode gzip",
      "\t@api path /api/*",
      `\treverse_proxy @api 127.0.0.1:${9000 + (i % 1000)}`,
      "\theader -Server",
      "\tfile_server",
      "}",
      "",
    );
  }
  return lines.join("\n");
}

/** Sites in the file: 10,000 (`GATEHOUSEFILE_BENCH_SITES` sets another count, for a quick check). */
const SITES = Number(Deno.env.get("GATEHOUSEFILE_BENCH_SITES") ?? 10_000);
const SOURCE = generateSites(SITES);
const DIR = await Deno.makeTempDir({ prefix: "gatehousefile-bench-" });
const FILE = `${DIR}/Caddyfile`;
await Deno.writeTextFile(FILE, SOURCE);
// (removed when the process ends, under `deno bench` too)
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

Deno.bench(
  { name: `adapt ${SITES} sites (in process)`, group: "gatehousefile", n: 5, warmup: 1 },
  () => {
    adaptGatehousefile(SOURCE, { filename: FILE });
  },
);

async function has(cmd: string, arg: string): Promise<boolean> {
  try {
    return (await new Deno.Command(cmd, { args: [arg], stdout: "null", stderr: "null" }).output())
      .success;
  } catch {
    return false;
  }
}

/** Runs a command line once; throws with its stderr when it fails. */
async function adaptOnce(cmd: string[]): Promise<void> {
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdout: "null",
    stderr: "piped",
  })
    .output();
  if (!out.success) {
    throw new Error(
      `${cmd.join(" ")} failed: ${new TextDecoder().decode(out.stderr).slice(0, 500)}`,
    );
  }
}

if (import.meta.main) {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    adaptGatehousefile(SOURCE, { filename: FILE });
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(
    `in process: adapt ${SITES} sites p50 ${Math.round(times[2])} ms (min ${
      Math.round(times[0])
    } ms)`,
  );
  const missing = [];
  if (!await has("hyperfine", "--version")) missing.push("hyperfine");
  if (!await has("caddy", "version")) missing.push("caddy");
  if (missing.length > 0) {
    console.log(
      `command-line comparison skipped: ${
        missing.join(" and ")
      } not installed (apt-get install -y ${missing.join(" ")})`,
    );
  } else {
    const root = new URL("..", import.meta.url).pathname;
    const report = `${DIR}/hyperfine.json`;
    const ours = [Deno.execPath(), "run", "-A", "--config", `${root}deno.json`, `${root}cli.ts`];
    const args = ["adapt", "--config", FILE, "--adapter", "caddyfile"];
    // both must adapt the file (hyperfine would time a failure as fast)
    await adaptOnce([...ours, ...args]);
    await adaptOnce(["caddy", ...args]);
    const out = await new Deno.Command("hyperfine", {
      args: [
        "--runs",
        "5",
        "--warmup",
        "1",
        "--export-json",
        report,
        "-n",
        "gatehouse adapt",
        [...ours, ...args].join(" "),
        "-n",
        "caddy adapt (2.6.2)",
        ["caddy", ...args].join(" "),
      ],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error("hyperfine failed");
    const r = JSON.parse(await Deno.readTextFile(report)) as {
      results: { command: string; mean: number; stddev: number; user: number }[];
    };
    for (const x of r.results) {
      console.log(
        `${x.command}: ${Math.round(x.mean * 1000)} ms ± ${Math.round(x.stddev * 1000)} ms (user ${
          Math.round(x.user * 1000)
        } ms)`,
      );
    }
    const [g, c] = r.results;
    console.log(`caddy adapt / gatehouse adapt: ${(c.mean / g.mean).toFixed(2)}×`);
  }
}
