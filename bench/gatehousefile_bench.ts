/**
 * Gatehousefile adapter benchmark: a generated 10,000-site Gatehousefile (root, encode, a
 * named matcher, reverse_proxy, header, file_server per site; every tenth site plain HTTP;
 * a global email so the TLS app gets policies).
 *
 * - `deno bench -A bench/gatehousefile_bench.ts`: adapting in process.
 * - `deno run -A bench/gatehousefile_bench.ts`: prints the in-process p50, then runs
 *   `gatehouse adapt` and `caddy adapt` (Caddy 2.6.2) on the same file in one hyperfine run,
 *   when both hyperfine and caddy are installed.
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

const SOURCE = generateSites(10_000);
const FILE = `${await Deno.makeTempDir({ prefix: "gatehousefile-bench-" })}/Caddyfile`;
await Deno.writeTextFile(FILE, SOURCE);

Deno.bench(
  { name: "adapt 10,000 sites (in process)", group: "gatehousefile", n: 5, warmup: 1 },
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

if (import.meta.main) {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    adaptGatehousefile(SOURCE, { filename: FILE });
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(
    `in process: adapt 10,000 sites p50 ${Math.round(times[2])} ms (min ${
      Math.round(times[0])
    } ms)`,
  );
  if (await has("hyperfine", "--version") && await has("caddy", "version")) {
    const root = new URL("..", import.meta.url).pathname;
    const report = `${FILE}.hyperfine.json`;
    const cli = `${Deno.execPath()} run -A --config ${root}deno.json ${root}cli.ts`;
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
        `${cli} adapt --config ${FILE} --adapter caddyfile`,
        "-n",
        "caddy adapt (2.6.2)",
        `caddy adapt --config ${FILE} --adapter caddyfile`,
      ],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (out.success) {
      const r = JSON.parse(await Deno.readTextFile(report)) as {
        results: { command: string; mean: number; stddev: number }[];
      };
      for (const x of r.results) {
        console.log(
          `${x.command}: ${Math.round(x.mean * 1000)} ms ± ${Math.round(x.stddev * 1000)} ms`,
        );
      }
    }
  } else console.log("hyperfine or caddy not installed: command-line comparison skipped");
  await Deno.remove(FILE.slice(0, FILE.lastIndexOf("/")), { recursive: true });
}
