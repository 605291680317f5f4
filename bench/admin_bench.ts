/**
 * Admin API benchmarks (run with `deno bench -A bench/admin_bench.ts`):
 * - PATCH round trip on a config with 1,000 routes (each PATCH re-provisions and swaps the
 *   whole config; deno bench reports p75/p99, and the avg is the p50 ballpark);
 * - POST /load of a config with 10,000 routes (forced with Cache-Control: must-revalidate).
 *
 * `deno run -A bench/admin_bench.ts` prints p50/p99 of the same measurements instead.
 *
 * @module
 */
import { startServer } from "../admin.ts";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function config(routes: number, port: number): Record<string, unknown> {
  return {
    logging: { logs: { default: { writer: { output: "discard" } } } },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true }, // plain HTTP on a loopback test port
            routes: Array.from({ length: routes }, (_, i) => ({
              match: [{ host: [`h${i}.example`], path: [`/r${i}/*`] }],
              handle: [{ handler: "static_response", body: `route ${i}` }],
            })),
          },
        },
      },
    },
  };
}

const small = await startServer({ adminAddress: "127.0.0.1:0", config: config(1000, freePort()) });
const big = await startServer({ adminAddress: "127.0.0.1:0", config: {} });
const bigBody = JSON.stringify(config(10_000, freePort()));
let n = 0;

Deno.bench(
  { name: "PATCH round trip (1,000 routes)", group: "admin", n: 200, warmup: 10 },
  async () => {
    const r = await fetch(
      `${small.adminUrl}/config/apps/http/servers/srv0/routes/500/handle/0/body`,
      {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(`v${n++}`),
      },
    );
    await r.body?.cancel();
    if (r.status !== 200) throw new Error(`status ${r.status}`);
  },
);

Deno.bench({ name: "POST /load (10,000 routes)", group: "admin", n: 10, warmup: 1 }, async () => {
  const r = await fetch(`${big.adminUrl}/load`, {
    method: "POST",
    headers: { "content-type": "application/json", "cache-control": "must-revalidate" },
    body: bigBody,
  });
  await r.body?.cancel();
  if (r.status !== 200) throw new Error(`status ${r.status}`);
});

function pct(xs: number[], p: number): string {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))].toFixed(1) + " ms";
}

async function time(fn: () => Promise<void>, runs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

if (import.meta.main) {
  const patch = async () => {
    const r = await fetch(
      `${small.adminUrl}/config/apps/http/servers/srv0/routes/500/handle/0/body`,
      {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(`v${n++}`),
      },
    );
    await r.body?.cancel();
  };
  const load = async () => {
    const r = await fetch(`${big.adminUrl}/load`, {
      method: "POST",
      headers: { "content-type": "application/json", "cache-control": "must-revalidate" },
      body: bigBody,
    });
    await r.body?.cancel();
  };
  await time(patch, 10);
  const p = await time(patch, 300);
  const l = await time(load, 10);
  console.log(
    `PATCH round trip, 1,000 routes: p50 ${pct(p, 50)}, p99 ${pct(p, 99)} (${p.length} runs)`,
  );
  console.log(
    `POST /load, 10,000 routes: p50 ${pct(l, 50)}, max ${pct(l, 100)} (${l.length} runs)`,
  );
  await small.stop();
  await big.stop();
}

globalThis.addEventListener("unload", () => {
  void small.stop();
  void big.stop();
});
