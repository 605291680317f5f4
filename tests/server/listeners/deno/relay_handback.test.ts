/**
 * The upgrade relay hands a connection back after its first request (see
 * `listeners/deno/upgrade_relay.ts`): an HTTPS server of the deno engine whose routes proxy
 * (so HTTP/1.1 connections may upgrade), run as a process, seen from its sockets: a
 * connection whose first request is a lone bodiless head is served directly from its second
 * request on, under the connection limits that apply to a kept-alive connection; one that
 * starts with a body or with two pipelined requests stays relayed, and a WebSocket still
 * switches.
 */
import assert from "node:assert/strict";
import { generateKey, makeRoot } from "../../../../lib/server/pki/x509.ts";
import { call, freePort, until } from "../../fixtures/helpers.ts";
import { finish, QUIET, serve, up } from "../../fixtures/process.ts";
import { pairsWithin } from "../../fixtures/sockets.ts";
import { leaf } from "../../tls/_helpers.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Reads one whole response (a Content-Length body) from `conn`, after `have`. */
async function response(
  conn: Deno.Conn,
  have = "",
): Promise<{ status: number; body: string; rest: string }> {
  let text = have;
  const buf = new Uint8Array(8192);
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    if (end >= 0) {
      const len = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.length >= end + 4 + len) {
        return {
          status: Number(text.slice(9, 12)),
          body: text.slice(end + 4, end + 4 + len),
          rest: text.slice(end + 4 + len),
        };
      }
    }
    const n = await conn.read(buf);
    if (n === null) throw new Error(`closed after ${JSON.stringify(text)}`);
    text += dec.decode(buf.subarray(0, n));
  }
}

/** Resolves when `conn` is closed by the server (EOF or reset). */
async function closedByServer(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(1024);
  while ((await conn.read(buf).catch(() => null)) !== null) { /* drain */ }
}

Deno.test({
  name:
    "upgrade relay (HTTPS): a first request without upgrade or body hands the connection back to be served directly; a body, pipelined requests or a WebSocket stay relayed",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const caKey = await generateKey();
    const ca = await makeRoot("Relay Test Root", caKey);
    const a = await leaf(ca, caKey, ["a.test"]);
    let hanging: (() => void) | undefined;
    const hangingSeen = new Promise<void>((r) => (hanging = r));
    let aborted: (() => void) | undefined;
    const hangingAborted = new Promise<void>((r) => (aborted = r));
    const upstream = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
      const path = new URL(req.url).pathname;
      if (path === "/slow") {
        await new Promise((r) => setTimeout(r, 1300));
        return new Response("slow");
      }
      if (path === "/hang") {
        // answers only when its client is gone
        hanging!();
        await new Promise<void>((r) => req.signal.addEventListener("abort", () => r()));
        aborted!();
        return new Response("too late");
      }
      if (req.headers.get("upgrade") === "websocket") {
        const { socket, response } = Deno.upgradeWebSocket(req);
        socket.onmessage = (e) => socket.send(`echo:${e.data}`);
        return response;
      }
      const body = req.body ? await req.text() : "";
      return new Response(`${req.method} ${new URL(req.url).pathname} ${body}`);
    });
    const port = freePort();
    const s = await serve({
      logging: QUIET,
      apps: {
        tls: { certificates: { load_pem: [a] } },
        http: {
          servers: {
            s: {
              listen: [`127.0.0.1:${port}`],
              automatic_https: { disable: true },
              tls_connection_policies: [{}],
              // a kept-alive connection may wait 1.5 s for its next request; a new one 300 ms
              read_header_timeout: "300ms",
              idle_timeout: "1500ms",
              routes: [{
                match: [{ path: ["/close"] }],
                handle: [{
                  handler: "static_response",
                  headers: { Connection: ["close"] },
                  body: "x".repeat(100_000),
                }],
                terminal: true,
              }, {
                handle: [{
                  handler: "reverse_proxy",
                  upstreams: [{ dial: `127.0.0.1:${upstream.addr.port}` }],
                }],
              }],
            },
          },
        },
      },
    }, ["--workers", "1"]);
    const known = new Set([port, upstream.addr.port, s.port]);
    // the server's connections between two ports that are neither its listeners' nor the
    // upstream's: the relay's pairs (its loopback server and the connections to it)
    const relayed = () => pairsWithin(s.p.child.pid, known);
    const open = async () => {
      const tcp = await Deno.connect({ hostname: "127.0.0.1", port });
      return await Deno.startTls(tcp, {
        hostname: "a.test",
        caCerts: [ca.pem],
        alpnProtocols: ["http/1.1"],
      });
    };
    const get = (path: string) => enc.encode(`GET ${path} HTTP/1.1\r\nHost: a.test\r\n\r\n`);
    const conns: Deno.Conn[] = [];
    try {
      await up(s.base);
      // 1. a lone GET: answered through the relay, then the connection is served directly
      const c1 = await open();
      conns.push(c1);
      await c1.write(get("/one"));
      assert.deepEqual(await response(c1), { status: 200, body: "GET /one ", rest: "" });
      // past read_header_timeout: the connection is held to idle_timeout now
      await new Promise((r) => setTimeout(r, 500));
      await c1.write(get("/two"));
      assert.deepEqual(await response(c1), { status: 200, body: "GET /two ", rest: "" });
      assert.equal(relayed(), 0, "served directly from its second request on");
      await c1.write(
        enc.encode("POST /three HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc"),
      );
      assert.deepEqual(await response(c1), { status: 200, body: "POST /three abc", rest: "" });

      // 2. a first request with a body stays relayed
      const c2 = await open();
      conns.push(c2);
      await c2.write(enc.encode("POST /p HTTP/1.1\r\nHost: a.test\r\nContent-Length: 2\r\n\r\nhi"));
      assert.deepEqual(await response(c2), { status: 200, body: "POST /p hi", rest: "" });
      await c2.write(get("/after"));
      assert.deepEqual(await response(c2), { status: 200, body: "GET /after ", rest: "" });
      assert.equal(relayed(), 1, "a first request with a body keeps its connection relayed");

      // 3. two pipelined requests: relayed, both answered in order
      const c3 = await open();
      conns.push(c3);
      await c3.write(enc.encode(
        "GET /x HTTP/1.1\r\nHost: a.test\r\n\r\nGET /y HTTP/1.1\r\nHost: a.test\r\n\r\n",
      ));
      const x = await response(c3);
      assert.equal(x.body, "GET /x ");
      assert.equal((await response(c3, x.rest)).body, "GET /y ");
      assert.equal(relayed(), 2);

      // 4. a WebSocket switches and relays messages
      const c4 = await open();
      conns.push(c4);
      await c4.write(enc.encode(
        "GET /ws HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
      ));
      const buf = new Uint8Array(4096);
      let head = "";
      while (!head.includes("\r\n\r\n")) {
        const n = await c4.read(buf);
        assert.ok(n !== null);
        head += dec.decode(buf.subarray(0, n));
      }
      assert.match(head, /^HTTP\/1\.1 101 /);
      const mask = [1, 2, 3, 4];
      const payload = [...enc.encode("hi")].map((b, i) => b ^ mask[i % 4]);
      await c4.write(new Uint8Array([0x81, 0x82, ...mask, ...payload]));
      const n = await c4.read(buf);
      assert.equal(dec.decode(buf.subarray(2, n!)), "echo:hi");

      // 5. a first answer that ends the connection reaches the client whole, then it closes
      const c6 = await open();
      conns.push(c6);
      await c6.write(get("/close"));
      const bye = await response(c6);
      assert.equal(bye.body.length, 100_000);
      await closedByServer(c6);

      // 6. a first answer longer than the relay waits for: relayed on, later requests answered
      // (the relayed connections so far closed first: idle ones would close meanwhile anyway)
      for (const c of [c2, c3, c4]) c.close();
      await until(() => relayed() === 0, 10_000, "relays closed");
      const c7 = await open();
      conns.push(c7);
      await c7.write(get("/slow"));
      assert.deepEqual(await response(c7), { status: 200, body: "slow", rest: "" });
      await c7.write(get("/later"));
      assert.deepEqual(await response(c7), { status: 200, body: "GET /later ", rest: "" });
      assert.equal(relayed(), 1, "a long first answer keeps its connection relayed");

      // 7. a client that leaves while its first answer is awaited is seen leaving: the
      // upstream's request is aborted
      const c8 = await open();
      await c8.write(get("/hang"));
      await hangingSeen;
      c8.close();
      await hangingAborted;

      // the handed-back connection is closed once idle_timeout passes after its last answer
      await closedByServer(c1);
      // and a new connection that sends nothing for read_header_timeout is closed too
      const c5 = await open();
      conns.push(c5);
      await closedByServer(c5);
    } finally {
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await call(s.base, "POST", "/stop").catch(() => {});
      assert.equal(await finish(s.p, s.dir), 0, s.p.output());
      await upstream.shutdown();
    }
  },
});
