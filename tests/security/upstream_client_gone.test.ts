/**
 * An upstream that never answers, behind a real `gatehouse run` process: a client that gives
 * up frees what its request held upstream. HTTP/1.1: the connection is closed (with the
 * default `deno` listener engine it stayed open for good — Deno settles `completed` only once a
 * response went out — so abandoned requests piled up sockets). HTTP/2 (`h2c`): the stream is
 * reset (it stayed open, and once the upstream's `MAX_CONCURRENT_STREAMS` were held by clients
 * long gone, every later request to that upstream waited forever). Caddy cancels the upstream
 * request when the client goes away, too.
 */
import assert from "node:assert/strict";
import http2 from "node:http2";

const STREAMS = 5;
const WATCHDOG = 20000;
import { startGatehouse } from "../server/http/hostile.ts";

for (const engine of ["deno", "node"]) {
  Deno.test(`reverse_proxy (${engine} engine): a client that leaves closes its HTTP/1.1 upstream connection`, async () => {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    let accepted = 0;
    let closed = 0;
    const serving = (async () => {
      for await (const c of l) {
        accepted++;
        (async () => {
          const b = new Uint8Array(4096);
          try {
            while ((await c.read(b)) !== null) { /* never answers */ }
          } catch { /* reset */ }
          closed++;
          c.close();
        })();
      }
    })().catch(() => {});
    const g = await startGatehouse({
      site: {
        listener_engine: engine,
        routes: [{
          handle: [{
            handler: "reverse_proxy",
            upstreams: [{ dial: `127.0.0.1:${(l.addr as Deno.NetAddr).port}` }],
          }],
        }],
      },
    });
    try {
      for (let i = 0; i < 3; i++) {
        const c = await Deno.connect({ hostname: "127.0.0.1", port: g.ports.site });
        await c.write(new TextEncoder().encode(`GET /hang/${i} HTTP/1.1\r\nHost: a\r\n\r\n`));
        const end = Date.now() + WATCHDOG;
        while (accepted <= i && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
        c.close();
      }
      const end = Date.now() + WATCHDOG;
      while (closed < 3 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      assert.equal(accepted, 3);
      assert.equal(closed, 3, "every upstream connection of a client that left is closed");
    } finally {
      await g.stop();
      l.close();
      await serving;
    }
  });
}

Deno.test("reverse_proxy h2c: a client that leaves frees its upstream stream", async () => {
  let closed = 0;
  const server = http2.createServer({ settings: { maxConcurrentStreams: STREAMS } });
  server.on("stream", (stream, headers) => {
    stream.on("close", () => closed++);
    stream.on("error", () => {});
    if (headers[":path"] === "/hang") return; // never answers
    stream.respond({ ":status": 200 });
    stream.end("ok");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const upstream = (server.address() as { port: number }).port;
  const g = await startGatehouse({
    site: {
      routes: [{
        handle: [{
          handler: "reverse_proxy",
          transport: { protocol: "http", versions: ["h2c"] },
          upstreams: [{ dial: `127.0.0.1:${upstream}` }],
        }],
      }],
    },
  });
  try {
    let arrived = 0;
    server.on("stream", () => arrived++);
    for (let i = 0; i < STREAMS + 3; i++) {
      const c = await Deno.connect({ hostname: "127.0.0.1", port: g.ports.site });
      await c.write(new TextEncoder().encode("GET /hang HTTP/1.1\r\nHost: a\r\n\r\n"));
      // Leave once the request is upstream (or queued there for a free stream).
      const end = Date.now() + WATCHDOG;
      while (arrived < Math.min(i + 1, STREAMS) && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 20));
      }
      c.close();
    }
    // Every stream the upstream saw is closed again (watchdog, not a timing claim).
    const end = Date.now() + WATCHDOG;
    while ((closed < arrived || arrived < STREAMS) && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(closed, arrived, `streams closed ${closed} of ${arrived}`);
    const r = await fetch(`http://127.0.0.1:${g.ports.site}/ok`, {
      signal: AbortSignal.timeout(WATCHDOG),
    });
    assert.equal(r.status, 200);
    assert.equal(await r.text(), "ok");
  } finally {
    await g.stop();
    await new Promise((r) => server.close(r));
  }
});
