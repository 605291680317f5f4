/**
 * Memory of the cache under many keys: a Gatehouse process proxies to the test origin
 * (tests/server/fixtures/origin.ts) with and without a `cache` handler whose memory storage
 * is bounded (`MAX_BYTES`, default 8 MiB); `ROUNDS` rounds of `KEYS` distinct keys of 1 KiB
 * each (64 at a time); after each round the server's resident set and the storage's own
 * figures (admin API `GET /cache/`) are printed. The server runs as one process
 * (`GATEHOUSE_WORKERS=1`, whatever the environment says), so its resident set is the cache's.
 *
 *   deno run -A bench/http/cache_memory.ts        # KEYS=50000 ROUNDS=3 MAX_BYTES=8388608
 *
 * @module
 */
const KEYS = Number(Deno.env.get("KEYS") ?? 50_000);
const ROUNDS = Number(Deno.env.get("ROUNDS") ?? 3);
const MAX_BYTES = Number(Deno.env.get("MAX_BYTES") ?? 8 * 1024 * 1024);
const CLI = new URL("../../cli.ts", import.meta.url).pathname;
const ORIGIN = new URL("../../tests/server/fixtures/origin.ts", import.meta.url).pathname;

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const p = (l.addr as Deno.NetAddr).port;
  l.close();
  return p;
}

async function up(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      await (await fetch(url)).body?.cancel();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} never answered`);
}

const rss = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${pid}/status`))![1]) / 1024;

async function run(withCache: boolean): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gatehouse-cache-mem-" });
  const originPort = freePort();
  const port = freePort();
  const adminPort = freePort();
  const origin = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ORIGIN, String(originPort)],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const cache = {
    handler: "cache",
    otter: { configuration: { size: 1_000_000, max_bytes: MAX_BYTES } },
  };
  await Deno.writeTextFile(
    `${dir}/config.json`,
    JSON.stringify({
      admin: { listen: `127.0.0.1:${adminPort}` },
      logging: { logs: { default: { level: "ERROR" } } },
      apps: {
        http: {
          servers: {
            s: {
              listen: [`127.0.0.1:${port}`],
              automatic_https: { disable: true },
              routes: [{
                handle: [
                  ...(withCache ? [cache] : []),
                  { handler: "reverse_proxy", upstreams: [{ dial: `127.0.0.1:${originPort}` }] },
                ],
              }],
            },
          },
        },
      },
    }),
  );
  const server = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "run", "--config", `${dir}/config.json`],
    stdout: "null",
    stderr: "null",
    // one process, whatever the environment says: its pid is the one that serves and caches
    env: {
      XDG_DATA_HOME: `${dir}/data`,
      XDG_CONFIG_HOME: `${dir}/config`,
      HOME: dir,
      GATEHOUSE_WORKERS: "1",
    },
  }).spawn();
  try {
    await up(`http://127.0.0.1:${originPort}/_counts`);
    await up(`http://127.0.0.1:${adminPort}/config/`);
    const label = withCache ? `cache (${(MAX_BYTES / 1048576).toFixed(0)} MiB)` : "no cache";
    console.log(`${label}: start RSS ${rss(server.pid).toFixed(1)} MiB`);
    for (let round = 0; round < ROUNDS; round++) {
      let next = 0;
      const t0 = performance.now();
      const worker = async () => {
        while (next < KEYS) {
          const i = next++;
          const r = await fetch(
            `http://127.0.0.1:${port}/r${round}/k${i}?cc=max-age%3D600&size=1024`,
          );
          await r.arrayBuffer();
        }
      };
      await Promise.all(Array.from({ length: 64 }, worker));
      const s = (performance.now() - t0) / 1000;
      const stats = withCache
        ? (await (await fetch(`http://127.0.0.1:${adminPort}/cache/`)).json())[0]
        : null;
      console.log(
        `${label}: round ${round + 1}, ${KEYS} keys in ${s.toFixed(1)} s: RSS ${
          rss(server.pid).toFixed(1)
        } MiB` +
          (stats
            ? `, storage ${stats.entries} entries, ${(stats.bytes / 1048576).toFixed(2)} MiB`
            : ""),
      );
    }
  } finally {
    server.kill("SIGTERM");
    origin.kill("SIGTERM");
    await server.status;
    await origin.status;
    await Deno.remove(dir, { recursive: true });
  }
}

await run(false);
await run(true);
