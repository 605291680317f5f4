/**
 * The `node` listener engine over TLS: what a listener keeps of its connections. Every
 * connection is forgotten when it closes (under a new-connection-per-request load the listener
 * used to keep every socket it had ever accepted, hundreds of MiB after a few thousand
 * handshakes), and shutdown closes idle keep-alive connections while a request in flight
 * finishes.
 */
import assert from "node:assert/strict";
import { serveNode } from "../../lib/server/listeners/node/listener.ts";
import { generateKey, makeLeaf, makeRoot } from "../../lib/server/pki/x509.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

async function certificate() {
  const caKey = await generateKey();
  const ca = await makeRoot("Node Listener Test Root", caKey);
  const k = await generateKey();
  const leaf = await makeLeaf(["localhost", "127.0.0.1"], k.keys.publicKey, ca.pem, caKey);
  return { ca: ca.pem, cert: leaf.pem, key: k.pem };
}

/** One HTTP/1.1 request on a new TLS connection; returns what the server sent until it closed. */
async function once(port: number, ca: string, path: string, close = true): Promise<string> {
  const conn = await Deno.connectTls(
    {
      hostname: "127.0.0.1",
      port,
      serverName: "localhost",
      caCerts: [ca],
    } as Deno.ConnectTlsOptions,
  );
  try {
    await conn.write(enc.encode(
      `GET ${path} HTTP/1.1\r\nhost: localhost\r\n${close ? "connection: close\r\n" : ""}\r\n`,
    ));
    let got = "";
    const buf = new Uint8Array(4096);
    while (true) {
      const n = await conn.read(buf);
      if (n === null) break;
      got += dec.decode(buf.subarray(0, n));
      if (!close && got.includes("\r\n\r\nhi")) break;
    }
    return got;
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

async function until(what: string, pred: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !pred(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(pred(), what);
}

Deno.test("node engine TLS: a connection is forgotten when it closes, and shutdown closes idle ones", async () => {
  const { ca, cert, key } = await certificate();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const s = await serveNode({
    hostname: "127.0.0.1",
    port: 0,
    localAddress: () => "127.0.0.1:0",
    tls: {
      source: () => ({
        getCertificate: () => Promise.resolve({ cert, key }),
        subscribe: () => () => {},
      }),
    },
    handler: async (req) => {
      if (new URL(req.url).pathname === "/held") await held;
      return new Response("hi");
    },
  });
  try {
    // 300 handshakes, one request each, several at a time
    for (let i = 0; i < 30; i++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => once(s.port, ca, "/")),
      );
      for (const a of answers) assert.match(a, /^HTTP\/1\.1 200 [\s\S]*\r\n\r\nhi$/);
    }
    await until(
      `every closed connection forgotten (${s.connections} kept)`,
      () => s.connections === 0,
    );

    // a keep-alive connection stays open (and counted) until shutdown closes it; a request in
    // flight at shutdown still gets its answer
    const idle = await Deno.connectTls(
      {
        hostname: "127.0.0.1",
        port: s.port,
        serverName: "localhost",
        caCerts: [ca],
      } as Deno.ConnectTlsOptions,
    );
    await idle.write(enc.encode("GET / HTTP/1.1\r\nhost: localhost\r\n\r\n"));
    const buf = new Uint8Array(4096);
    let first = "";
    while (!first.includes("\r\n\r\nhi")) {
      const n = await idle.read(buf);
      assert.ok(n !== null, "keep-alive connection open");
      first += dec.decode(buf.subarray(0, n));
    }
    const inFlight = once(s.port, ca, "/held");
    await until("both connections counted", () => s.connections === 2);
    await s.shutdown();
    // closed: an end of stream, with or without TLS close_notify
    const end = await idle.read(buf).catch((e) => (e as Error).name);
    assert.ok(
      end === null || end === "UnexpectedEof",
      `idle keep-alive connection closed (${end})`,
    );
    idle.close();
    release();
    const answer = await inFlight;
    assert.match(answer, /^HTTP\/1\.1 200 [\s\S]*connection: close[\s\S]*\r\n\r\nhi$/i);
    await s.finished;
    assert.equal(s.connections, 0);
  } finally {
    release();
    await s.shutdown();
  }
});

/** Sockets of this process's TCP table on local `port` in CLOSE-WAIT (the peer closed, we did not). */
function closeWaits(port: number): number {
  let n = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = Deno.readTextFileSync(file);
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4) continue;
      const local = parseInt(f[1].slice(f[1].lastIndexOf(":") + 1), 16);
      if (local === port && f[3] === "08") n++;
    }
  }
  return n;
}

Deno.test("node engine TLS: a connection the client closes first (after requests or mid-handshake) is closed here too, and shutdown finishes", async () => {
  const { ca, cert, key } = await certificate();
  const s = await serveNode({
    hostname: "127.0.0.1",
    port: 0,
    localAddress: () => "127.0.0.1:0",
    tls: {
      source: () => ({
        getCertificate: () => Promise.resolve({ cert, key }),
        subscribe: () => () => {},
      }),
    },
    handler: () => new Response("hi"),
  });
  try {
    // keep-alive requests: the client closes each connection after its answer
    for (let i = 0; i < 5; i++) {
      assert.match(await once(s.port, ca, "/", false), /\r\n\r\nhi/);
    }
    // clients that close before their handshake ends: silent, or after part of a ClientHello
    for (const bytes of [new Uint8Array(0), new Uint8Array([0x16, 0x03, 0x01, 0x00, 0x40, 0x01])]) {
      const raw = await Deno.connect({ hostname: "127.0.0.1", port: s.port });
      if (bytes.length) await raw.write(bytes);
      await new Promise((r) => setTimeout(r, 50));
      raw.close();
    }
    await until(
      `no connection left half closed (${closeWaits(s.port)} in CLOSE-WAIT)`,
      () => closeWaits(s.port) === 0 && s.connections === 0,
    );
    await s.shutdown();
    await s.finished;
  } finally {
    await s.shutdown();
  }
});
