/**
 * A `gatehouse run` process serving HTTP/3 survives clients that misbehave at the QUIC and
 * HTTP/3 level: random bytes on request, control and reserved streams, requests cut at random
 * points, connections closed abruptly with random codes while requests are under way, bodies
 * abandoned half-read. Afterwards the process still runs and answers over HTTP/3 and
 * HTTP/1.1 (an unhandled rejection or a panic in Deno's QUIC would have ended it).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { H3ClientConnection } from "../../../../lib/server/listeners/h3/client.ts";
import { encodeFrame, FRAME, STREAM_TYPE } from "../../../../lib/server/listeners/h3/frames.ts";
import { encodeFieldSection } from "../../../../lib/server/listeners/h3/qpack/encoder.ts";
import { CLI, DENO_JSON, tempEnv } from "../../fixtures/helpers.ts";
import { concat, freeTcpUdpPort, testPki, text } from "./_h3.ts";

const dec = new TextDecoder();

const action = fc.oneof(
  fc.record({ kind: fc.constant("bytes" as const), bytes: fc.uint8Array({ maxLength: 200 }) }),
  fc.record({
    kind: fc.constant("cut" as const),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
    body: fc.integer({ min: 0, max: 50_000 }),
  }),
  fc.record({
    kind: fc.constant("uni" as const),
    type: fc.integer({ min: 0, max: 0x40 }),
    bytes: fc.uint8Array({ maxLength: 100 }),
  }),
  fc.record({ kind: fc.constant("abandon" as const) }),
  fc.record({ kind: fc.constant("close" as const), code: fc.integer({ min: 0, max: 0x3fff }) }),
);

Deno.test("h3 chaos: a server process survives misbehaving HTTP/3 clients", async () => {
  const p = await testPki();
  const t = await tempEnv();
  const port = freeTcpUdpPort();
  const config = {
    admin: { disabled: true },
    logging: { logs: { default: { level: "ERROR" } } },
    apps: {
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
            routes: [
              {
                match: [{ path: ["/big"] }],
                handle: [{ handler: "static_response", body: "x".repeat(300_000) }],
              },
              { handle: [{ handler: "static_response", body: "alive" }] },
            ],
          },
        },
      },
      tls: {
        certificates: {
          load_pem: [{ certificate: p.leafs.localhost.cert, key: p.leafs.localhost.key }],
        },
      },
    },
  };
  const file = `${t.dir}/config.json`;
  await Deno.writeTextFile(file, JSON.stringify(config));
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", DENO_JSON, CLI, "run", "-c", file],
    env: t.env,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const drained = Promise.all([child.stdout, child.stderr].map(async (s) => {
    for await (const c of s) out += dec.decode(c);
  }));
  let ended = false;
  child.status.then(() => (ended = true));
  const get = async (path = "/") => {
    const c = await H3ClientConnection.connect({
      hostname: "127.0.0.1",
      port,
      serverName: "localhost",
      caCerts: [p.caPem],
      maxIdleTimeout: 3000,
    });
    try {
      return await text((await c.request({ method: "GET", authority: "localhost", path })).body);
    } finally {
      c.close();
    }
  };
  try {
    let up = "";
    for (let i = 0; i < 200 && up !== "alive"; i++) {
      up = await get().catch(() => "");
      if (up !== "alive") await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(up, "alive", out);
    const request = encodeFrame(
      FRAME.HEADERS,
      encodeFieldSection([
        ":method",
        "POST",
        ":scheme",
        "https",
        ":authority",
        "localhost",
        ":path",
        "/big",
      ], 0),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 6 }), async (actions) => {
        const conn = await Deno.connectQuic({
          hostname: "127.0.0.1",
          port,
          serverName: "localhost",
          caCerts: [p.caPem],
          alpnProtocols: ["h3"],
          maxIdleTimeout: 3000,
        });
        const keep: WritableStreamDefaultWriter<Uint8Array>[] = [];
        try {
          const control = (await conn.createUnidirectionalStream()).getWriter();
          keep.push(control);
          await control.write(
            concat(
              Uint8Array.of(STREAM_TYPE.CONTROL),
              encodeFrame(FRAME.SETTINGS, new Uint8Array(0)),
            ),
          );
          for (const a of actions) {
            if (a.kind === "close") {
              conn.close({ closeCode: a.code, reason: "chaos" });
              break;
            }
            if (a.kind === "uni") {
              const w = (await conn.createUnidirectionalStream()).getWriter();
              keep.push(w);
              await w.write(concat(Uint8Array.of(a.type), a.bytes));
              continue;
            }
            const bi = await conn.createBidirectionalStream();
            const w = bi.writable.getWriter();
            keep.push(w);
            if (a.kind === "bytes") {
              await w.write(a.bytes.length ? a.bytes : Uint8Array.of(0));
              await w.close();
            } else if (a.kind === "cut") {
              const whole = concat(request, encodeFrame(FRAME.DATA, new Uint8Array(a.body)));
              await w.write(whole.subarray(0, Math.max(1, Math.floor(a.at * whole.length))));
              if (a.at > 0.5) await w.close();
            } else {
              // a whole request whose large answer is read a little, then dropped
              await w.write(request);
              await w.close();
              const r = bi.readable.getReader();
              await r.read().catch(() => {});
              r.cancel().catch(() => {});
            }
          }
        } catch { /* the server closed the connection: that is allowed */ }
        conn.close({ closeCode: 0x100, reason: "" });
        await conn.closed.catch(() => {});
        assert.equal(ended, false, `the server ended:\n${out}`);
      }),
      { numRuns: 60 },
    );
    // still serving, over HTTP/3 and HTTP/1.1
    assert.equal(await get(), "alive");
    assert.equal((await get("/big")).length, 300_000);
    await Deno.writeTextFile(`${t.dir}/ca.pem`, p.caPem);
    const h1 = await new Deno.Command("curl", {
      args: ["-s", "--http1.1", "--cacert", `${t.dir}/ca.pem`, `https://127.0.0.1:${port}/`],
      stdout: "piped",
    }).output();
    assert.equal(dec.decode(h1.stdout), "alive");
    assert.equal(ended, false, out);
  } finally {
    try {
      child.kill("SIGTERM");
    } catch { /* ended */ }
    await child.status;
    await drained;
    await Deno.remove(t.dir, { recursive: true }).catch(() => {});
  }
});
