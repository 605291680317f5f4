/**
 * WebSockets through `reverse_proxy` on an HTTPS server of the deno engine, both kinds of TLS
 * listener (one certificate held, a certificate per server name), and across a reload that
 * adds the proxy to a server that had none (its listener changes how it serves). The client
 * speaks the WebSocket protocol itself over a TLS connection that trusts the test's own root.
 */
import assert from "node:assert/strict";
import { generateKey, makeRoot } from "../../../lib/server/pki/x509.ts";
import { freePort, leaf, tlsServer } from "./_helpers.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A WebSocket echo upstream on loopback. */
function echoUpstream(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    if (req.headers.get("upgrade") !== "websocket") return new Response("plain");
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = (e) => socket.send(`echo:${e.data}`);
    return response;
  });
}

/** Reads from `conn` until `n` bytes are in `buf`. */
async function fill(conn: Deno.Conn, have: Uint8Array, n: number): Promise<Uint8Array> {
  let buf = have;
  while (buf.length < n) {
    const chunk = new Uint8Array(4096);
    const got = await conn.read(chunk);
    if (got === null) throw new Error(`connection closed after ${buf.length} of ${n} bytes`);
    const next = new Uint8Array(buf.length + got);
    next.set(buf);
    next.set(chunk.subarray(0, got), buf.length);
    buf = next;
  }
  return buf;
}

/**
 * Opens a WebSocket to `name` on `port` over TLS (HTTP/1.1), sends two text messages, returns
 * the two answers, then closes.
 */
async function wssExchange(
  port: number,
  name: string,
  caPem: string,
  keep?: (conn: Deno.TlsConn) => void,
): Promise<string[]> {
  const tcp = await Deno.connect({ hostname: "127.0.0.1", port });
  const conn = await Deno.startTls(tcp, {
    hostname: name,
    caCerts: [caPem],
    alpnProtocols: ["http/1.1"],
  });
  try {
    await conn.write(enc.encode(
      `GET /socket HTTP/1.1\r\nHost: ${name}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    ));
    let buf: Uint8Array = new Uint8Array(0);
    let end = -1;
    while (end < 0) {
      buf = await fill(conn, buf, buf.length + 1);
      end = dec.decode(buf).indexOf("\r\n\r\n");
    }
    const head = dec.decode(buf.subarray(0, end));
    assert.match(head, /^HTTP\/1\.1 101 /, head);
    buf = buf.subarray(end + 4);
    const out: string[] = [];
    for (const text of ["hello", "again"]) {
      const payload = enc.encode(text);
      const mask = crypto.getRandomValues(new Uint8Array(4));
      const frame = new Uint8Array([0x81, 0x80 | payload.length, ...mask, ...payload]);
      for (let i = 0; i < payload.length; i++) frame[6 + i] ^= mask[i % 4];
      await conn.write(frame);
    }
    while (out.length < 2) {
      buf = await fill(conn, buf, 2);
      const len = buf[1] & 0x7f; // short text frames from the server, unmasked
      buf = await fill(conn, buf, 2 + len);
      assert.equal(buf[0], 0x81, "a final text frame");
      out.push(dec.decode(buf.subarray(2, 2 + len)));
      buf = buf.subarray(2 + len);
    }
    if (keep) keep(conn);
    return out;
  } finally {
    if (!keep) conn.close();
  }
}

function config(
  port: number,
  upstream: string | null,
  pems: { certificate: string; key: string }[],
) {
  return {
    apps: {
      tls: { certificates: { load_pem: pems } },
      http: {
        servers: {
          srv0: {
            listen: [`127.0.0.1:${port}`],
            automatic_https: { disable: true },
            tls_connection_policies: [{}],
            routes: [{
              handle: [
                upstream
                  ? { handler: "reverse_proxy", upstreams: [{ dial: upstream }] }
                  : { handler: "static_response", body: "no proxy yet" },
              ],
            }],
          },
        },
      },
    },
  };
}

Deno.test("tls (deno engine): WebSockets through reverse_proxy on a server started with it", async () => {
  const caKey = await generateKey();
  const ca = await makeRoot("WebSocket Test Root", caKey);
  const a = await leaf(ca, caKey, ["a.test"]);
  const up = echoUpstream();
  const port = freePort();
  const srv = await tlsServer(config(port, `127.0.0.1:${up.addr.port}`, [a]));
  let open: Deno.TlsConn | undefined;
  try {
    assert.deepEqual(await wssExchange(port, "a.test", ca.pem), ["echo:hello", "echo:again"]);
    // one left open: the server's stop closes it (and does not wait for its client)
    await wssExchange(port, "a.test", ca.pem, (c) => (open = c));
  } finally {
    await srv.stop();
    await up.shutdown();
  }
  const buf = new Uint8Array(1024);
  let n: number | null;
  do n = await open!.read(buf).catch(() => null); while (n !== null);
  open!.close();
});

Deno.test("tls (deno engine): WebSockets through reverse_proxy, with one certificate held, with a certificate per name, and after a reload adds the proxy", async () => {
  const caKey = await generateKey();
  const ca = await makeRoot("WebSocket Test Root", caKey);
  const a = await leaf(ca, caKey, ["a.test"]);
  const b = await leaf(ca, caKey, ["b.test"]);
  const up = echoUpstream();
  const dial = `127.0.0.1:${up.addr.port}`;
  const port = freePort();
  const srv = await tlsServer(config(port, null, [a]));
  try {
    // the listener is replaced in the background after a reload: until it is, a try may fail
    const eventually = async (name: string) => {
      let got: string[] | Error = new Error("not tried");
      for (let i = 0; i < 40; i++) {
        got = await wssExchange(port, name, ca.pem).catch((e) => e as Error);
        if (!(got instanceof Error)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      return got;
    };
    // a reload adds the proxy: the listener (one certificate held) now relays WebSockets
    assert.ok(await srv.load(config(port, dial, [a])));
    assert.deepEqual(await eventually("a.test"), ["echo:hello", "echo:again"]);
    // a second certificate: chosen per name, WebSockets still relayed for both names
    assert.ok(await srv.load(config(port, dial, [a, b])));
    assert.deepEqual(await eventually("b.test"), ["echo:hello", "echo:again"]);
    assert.deepEqual(await wssExchange(port, "a.test", ca.pem), ["echo:hello", "echo:again"]);
  } finally {
    await srv.stop();
    await up.shutdown();
  }
});
