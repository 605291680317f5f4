/**
 * An HTTP/3 load generator (Debian's h2load is built without HTTP/3): `connections` QUIC
 * connections over `Deno.connectQuic`, each keeping `streams` requests in flight with the
 * HTTP/3 client of `lib/server/listeners/h3/client.ts`, every answer read to its end, for
 * `seconds`. Prints one JSON line: requests, failures, bytes, requests/s, p50/p99 latency (ms).
 *
 *   deno run -A bench/http/h3_load.ts --port 8443 --path / --ca ca.pem [--connections 8]
 *     [--streams 8] [--seconds 5] [--name localhost]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { H3ClientConnection } from "../../lib/server/listeners/h3/client.ts";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    path: { type: "string", default: "/" },
    ca: { type: "string" },
    name: { type: "string", default: "localhost" },
    connections: { type: "string", default: "8" },
    streams: { type: "string", default: "8" },
    seconds: { type: "string", default: "5" },
  },
});
const port = Number(values.port);
const ca = Deno.readTextFileSync(values.ca!);
const seconds = Number(values.seconds);
const latencies: number[] = [];
let failures = 0;
let bytes = 0;
let requests = 0;

async function drain(body: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const piece of body) n += piece.length;
  return n;
}

const conns = await Promise.all(
  Array.from({ length: Number(values.connections) }, () =>
    H3ClientConnection.connect({
      hostname: "127.0.0.1",
      port,
      serverName: values.name,
      caCerts: [ca],
      maxIdleTimeout: 30_000,
    })),
);
const authority = `${values.name}:${port}`;
const started = performance.now();
const end = started + seconds * 1000;
await Promise.all(conns.flatMap((c) =>
  Array.from({ length: Number(values.streams) }, async () => {
    while (performance.now() < end) {
      const t = performance.now();
      try {
        const res = await c.request({ method: "GET", authority, path: values.path! });
        const n = await drain(res.body);
        if (res.status !== 200) failures++;
        else {
          bytes += n;
          requests++;
          latencies.push(performance.now() - t);
        }
      } catch {
        failures++;
        if (c.closed) return;
      }
    }
  })
));
const elapsed = (performance.now() - started) / 1000;
for (const c of conns) c.close();
latencies.sort((a, b) => a - b);
const at = (q: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
console.log(JSON.stringify({
  requests,
  failures,
  bytes,
  rps: requests / elapsed,
  p50: at(0.5),
  p99: at(0.99),
  seconds: elapsed,
}));
Deno.exit(0);
