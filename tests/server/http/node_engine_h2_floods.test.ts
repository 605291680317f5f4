/**
 * HTTP/2 floods against the node listener engine, chosen as it is in production: servers
 * behind the `proxy_protocol` listener wrapper, one h2 over TLS and one h2c, in a real
 * `gatehouse run` process. Raw clients send the floods frame by frame (the rapid reset of
 * CVE-2023-44487, a CONTINUATION flood as CVE-2024-27316, a SETTINGS flood): each gets
 * GOAWAY(ENHANCE_YOUR_CALM) and its connection closed long before its flood is done, while a
 * normal client on another connection is answered throughout. Clients within the budgets
 * (`lib/server/listeners/node/h2_frames.ts`) keep their connection. Performance figures are
 * measured by `bench/http/h2_rapid_reset.ts`, never asserted here.
 */
import assert from "node:assert/strict";
import { freePort, spawnCli, tempEnv, until } from "../fixtures/helpers.ts";
import {
  concat,
  ERROR,
  flood,
  FRAME,
  frame,
  getBlock,
  rapidReset,
  RawH2,
  type RawTarget,
} from "../fixtures/h2_raw.ts";
import { FRAME_BUDGETS } from "../../../lib/server/listeners/node/h2_frames.ts";
import { makePki } from "./pki.ts";
import { h2Client, nodeAvailable } from "../parity2/_h2_client.ts";

const PROXY = "PROXY TCP4 203.0.113.9 127.0.0.1 4321 443\r\n";
const END_STREAM = 0x1;
const END_HEADERS = 0x4;

const pki = await makePki({ local: { dns: ["localhost"], ip: ["127.0.0.1"] } });

/** A `gatehouse run` process with an h2 (TLS) and an h2c server, both behind proxy_protocol. */
async function start() {
  const { dir, env } = await tempEnv();
  const [tlsPort, h2cPort] = [freePort(), freePort()];
  const pp = { wrapper: "proxy_protocol", allow: ["127.0.0.0/8"] };
  const routes = [{ handle: [{ handler: "static_response", body: "ok {http.request.proto}" }] }];
  const config = {
    admin: { disabled: true },
    apps: {
      tls: {
        certificates: {
          load_pem: [{ certificate: pki.leafs.local.cert, key: pki.leafs.local.key }],
        },
      },
      http: {
        servers: {
          tls: {
            listen: [`127.0.0.1:${tlsPort}`],
            listener_wrappers: [pp, { wrapper: "tls" }],
            listener_engine: "node",
            tls_connection_policies: [{}],
            automatic_https: { disable_redirects: true },
            routes,
          },
          h2c: {
            listen: [`127.0.0.1:${h2cPort}`],
            listener_wrappers: [pp],
            // the deno engine serves cleartext wrappers too; this test is the node engine's
            listener_engine: "node",
            protocols: ["h1", "h2c"],
            routes,
          },
        },
      },
    },
  };
  await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config));
  const srv = spawnCli(["run", "--config", `${dir}/config.json`], env);
  let exited: Deno.CommandStatus | false = false;
  srv.status.then((s) => (exited = s));
  for (const port of [tlsPort, h2cPort]) {
    await until(
      async () => {
        if (exited) return true;
        (await Deno.connect({ hostname: "127.0.0.1", port })).close();
        return true;
      },
      90_000,
      "the server to listen",
    ).catch((e) => {
      throw new Error(`${e.message}\n${srv.output().slice(-2000)}`);
    });
  }
  const alive = () => {
    assert.equal(exited, false, `the server ended:\n${srv.output().slice(-3000)}`);
  };
  alive();
  const targets: { name: string; t: RawTarget; origin: string }[] = [
    {
      name: "h2 (TLS)",
      t: { port: tlsPort, ca: pki.caPem, proxy: PROXY },
      origin: `https://localhost:${tlsPort}`,
    },
    { name: "h2c", t: { port: h2cPort, proxy: PROXY }, origin: `http://127.0.0.1:${h2cPort}` },
  ];
  return {
    targets,
    alive,
    async stop() {
      if (!exited) {
        srv.child.kill("SIGTERM");
        await srv.status;
      }
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** A GET on stream `id` (END_STREAM, END_HEADERS). */
function get(t: RawTarget, id: number, path = "/"): Uint8Array {
  return frame(
    FRAME.HEADERS,
    END_STREAM | END_HEADERS,
    id,
    getBlock(t.ca ? "https" : "http", "localhost", path),
  );
}

const rst = (id: number) => frame(FRAME.RST_STREAM, 0, id, new Uint8Array([0, 0, 0, ERROR.CANCEL]));

/** The server's answer HEADERS on stream `id`, or null when the connection ended first. */
function answer(c: RawH2, id: number) {
  return c.next((f) => f.type === FRAME.HEADERS && f.stream === id);
}

Deno.test({
  name:
    "node engine h2 floods: rapid reset, CONTINUATION and SETTINGS floods end with GOAWAY ENHANCE_YOUR_CALM over h2 and h2c; other clients are answered; clients within the budgets keep their connection",
  ignore: !nodeAvailable(),
  async fn(t) {
    const srv = await start();
    try {
      for (const { name, t: target, origin } of srv.targets) {
        await t.step(`${name}: 10,000 HEADERS+RST_STREAM pairs`, async () => {
          const other = h2Client({ origin, ca: pki.caPem, proxy: PROXY });
          try {
            const first = await other.request({ path: "/before" });
            assert.equal(first.status, 200, JSON.stringify(first));
            let done = false;
            const flooding = rapidReset(target, 10_000).finally(() => (done = true));
            // the other client asks again and again while the flood runs, on its own connection
            const answers: (number | undefined)[] = [];
            while (!done) answers.push((await other.request({ path: "/during" })).status);
            const r = await flooding;
            assert.equal(r.goaway?.code, ERROR.ENHANCE_YOUR_CALM, JSON.stringify(r));
            assert.ok(r.closed, "the server closed the connection");
            // at most the budget and a few more: the bucket refills while a slow machine reads,
            // and a pair split across two reads may be answered before its reset arrives
            const taken = Math.ceil(r.goaway!.lastStream / 2);
            assert.ok(
              taken <= 2 * FRAME_BUDGETS.earlyResets,
              `the server took ${taken} streams of the flood`,
            );
            assert.ok(r.responses <= taken);
            assert.ok(answers.length > 0);
            assert.deepEqual(answers.filter((s) => s !== 200), [], "every answer during the flood");
            assert.equal((await other.request({ path: "/after" })).status, 200);
            assert.equal(
              other.lines.filter((l) => l.ev === "connected").length,
              1,
              "the other client kept its session",
            );
          } finally {
            await other.close();
          }
          srv.alive();
        });

        await t.step(`${name}: a CONTINUATION flood (no END_HEADERS, ever)`, async () => {
          const block = getBlock(target.ca ? "https" : "http", "localhost");
          const head = frame(FRAME.HEADERS, END_STREAM, 1, block);
          const more = concat(
            Array.from(
              { length: 1000 },
              (_, i) =>
                frame(
                  FRAME.CONTINUATION,
                  0,
                  1,
                  new Uint8Array([0x00, 2, 0x78, 0x2d, 1, 48 + (i % 10)]),
                ),
            ),
          );
          const r = await flood(target, 10, (i) => (i === 0 ? concat([head, more]) : more));
          assert.equal(r.goaway?.code, ERROR.ENHANCE_YOUR_CALM, JSON.stringify(r));
          assert.equal(r.goaway?.lastStream, 0);
          assert.ok(r.closed);
          assert.equal(r.responses, 0);
          // the limit: a HEADERS and 8 CONTINUATION frames is a request like any other
          const c = await RawH2.open(target);
          try {
            const fields = Array.from(
              { length: 8 },
              (_, i) => new Uint8Array([0x00, 2, 0x78, 0x2d, 1, 48 + i]), // x-: <digit>
            );
            await c.send(
              frame(FRAME.HEADERS, END_STREAM, 1, block),
              ...fields.map((f, i) => frame(FRAME.CONTINUATION, i === 7 ? END_HEADERS : 0, 1, f)),
            );
            assert.ok(await answer(c, 1), "answered");
            assert.equal(c.goaway(), undefined);
          } finally {
            c.close();
          }
          srv.alive();
        });

        await t.step(`${name}: a SETTINGS flood`, async () => {
          const settings = frame(FRAME.SETTINGS, 0, 0, new Uint8Array([0, 3, 0, 0, 0, 100]));
          const batch = concat(Array.from({ length: 1000 }, () => settings));
          const r = await flood(target, 100, () => batch);
          assert.equal(r.goaway?.code, ERROR.ENHANCE_YOUR_CALM, JSON.stringify(r));
          assert.ok(r.closed);
          assert.ok(r.acks <= 2 * FRAME_BUDGETS.settings, `${r.acks} SETTINGS acknowledged`);
          srv.alive();
        });

        await t.step(`${name}: within the budgets the connection stays`, async () => {
          const c = await RawH2.open(target);
          try {
            // 50 streams reset before their answer, then a request: answered
            const pairs: Uint8Array[] = [];
            for (let id = 1; id <= 99; id += 2) pairs.push(get(target, id), rst(id));
            await c.send(...pairs);
            await c.send(get(target, 101, "/after-resets"));
            assert.ok(await answer(c, 101), "answered after 50 early resets");
            // 300 streams reset after their answer began (a client cancelling downloads): none
            // counts
            for (let id = 103; id < 103 + 600; id += 2) {
              await c.send(get(target, id));
              assert.ok(await answer(c, id), `stream ${id} answered`);
              await c.send(rst(id));
            }
            await c.send(get(target, 703, "/last"));
            assert.ok(await answer(c, 703), "answered after 300 resets of answered streams");
            // a few SETTINGS more, as clients send them
            for (let i = 0; i < 20; i++) await c.send(frame(FRAME.SETTINGS, 0, 0));
            await c.send(get(target, 705));
            assert.ok(await answer(c, 705));
            assert.equal(c.goaway(), undefined, "no GOAWAY");
          } finally {
            c.close();
          }
          srv.alive();
        });

        await t.step(
          `${name}: a HEADERS and a WINDOW_UPDATE of 0 in one read end the session, not the server`,
          async () => {
            const c = await RawH2.open(target);
            try {
              await c.send(get(target, 1), frame(FRAME.WINDOW_UPDATE, 0, 1, new Uint8Array(4)));
              await c.closed;
              assert.equal(c.goaway()?.code, ERROR.PROTOCOL_ERROR);
            } finally {
              c.close();
            }
            // the stream that came already destroyed used to end the process (its error event
            // had no listener); the server must still answer
            await new Promise((r) => setTimeout(r, 300));
            srv.alive();
            const again = await RawH2.open(target);
            try {
              await again.send(get(target, 1));
              assert.ok(await answer(again, 1));
            } finally {
              again.close();
            }
          },
        );
      }
    } finally {
      await srv.stop();
    }
  },
});
