/**
 * The pieces of a listener handover (lib/server/listeners/deno/handover.ts) against the real
 * kernel, on plain TCP listeners sharing a port (SO_REUSEPORT):
 * - the BPF programs send every new connection to the socket they name, and probes from
 *   their own source ports to the other one, each with a ClientHello for its name;
 * - a handshake under way on the old socket when the port changes hands (held half open with
 *   TCP_DEFER_ACCEPT: the server keeps it as a request until the client sends data) keeps
 *   the old socket open until it completes, and is served there; closing a socket with such a
 *   handshake resets it, which is what the wait avoids;
 * - a server without the `ffi` permission falls back, says so once in its log, and still
 *   serves each new certificate.
 */
import assert from "node:assert/strict";
import { CLI, DENO_JSON } from "../fixtures/helpers.ts";
import { linuxSockets } from "../../../lib/server/listeners/deno/linux_sockets.ts";
import {
  beginHandover,
  newListener,
  type OwnSocket,
  pin,
} from "../../../lib/server/listeners/deno/handover.ts";
import { bySourcePort, toIndex } from "../../../lib/server/listeners/deno/reuseport_bpf.ts";
import { warmResolver } from "../../../lib/server/listeners/deno/resolver_warmup.ts";
import { generateKey, makeLeaf, makeRoot } from "../../../lib/server/pki/x509.ts";
import { freePort, servedCert } from "./_helpers.ts";

const linux = Deno.build.os === "linux";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const enc = new TextEncoder();
const dec = new TextDecoder();

function kernel() {
  const k = linuxSockets();
  if (typeof k === "string") throw new Error(`no kernel calls: ${k}`);
  return k;
}

/** A TCP listener on a shared port whose connections are recorded and answered `<tag>:<data>`. */
function tagged(port: number, tag: string, ours: Map<number, number>) {
  const k = kernel();
  const expected = k.nextDescriptor();
  const listener = Deno.listen(
    { hostname: "127.0.0.1", port, reusePort: true } as Deno.ListenOptions,
  );
  const socket = newListener(k, { family: 4, address: "127.0.0.1", port }, ours, expected);
  if (typeof socket === "string") throw new Error(socket);
  const received: string[] = [];
  const loop = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(1024);
        const n = await conn.read(buf).catch(() => null);
        received.push(n ? dec.decode(buf.subarray(0, n)) : "");
        await conn.write(enc.encode(`${tag}:${n ? dec.decode(buf.subarray(0, n)) : ""}`))
          .catch(() => {});
        conn.close();
      })();
    }
  })();
  return { listener, socket, received, loop };
}

async function ask(port: number, data: string): Promise<string> {
  const c = await Deno.connect({ hostname: "127.0.0.1", port });
  await c.write(enc.encode(data));
  const buf = new Uint8Array(1024);
  const n = await c.read(buf);
  c.close();
  return n ? dec.decode(buf.subarray(0, n)) : "";
}

/** Holds `fd`'s new connections as half-open requests until their client sends data. */
function deferAccept(fd: number): void {
  const lib = Deno.dlopen("libc.so.6", {
    setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  });
  try {
    const seconds = new Uint8Array(new Int32Array([30]).buffer);
    assert.equal(
      lib.symbols.setsockopt(fd, 6, /* IPPROTO_TCP */ 9, /* TCP_DEFER_ACCEPT */ seconds, 4),
      0,
    );
  } finally {
    lib.close();
  }
}

Deno.test({
  name:
    "reuseport programs: every new connection to the socket named; probes by source port to the other one, with their server names",
  ignore: !linux,
  async fn() {
    const k = kernel();
    const port = freePort();
    const at = { family: 4, address: "127.0.0.1", port } as const;
    const ours = new Map<number, number>();
    const a = tagged(port, "a", ours);
    const b = tagged(port, "b", ours);
    try {
      assert.notEqual(a.socket.inode, b.socket.inode);
      // a descriptor is told by the socket it holds, not by its port
      assert.equal(k.descriptorOf(a.socket.inode, at, a.socket.fd, []), a.socket.fd);
      assert.equal(k.descriptorOf(b.socket.inode, at, a.socket.fd, []), b.socket.fd);
      assert.deepEqual(
        k.listeners(at).map((s) => s.inode).sort(),
        [a.socket.inode, b.socket.inode].sort(),
      );
      k.steer(a.socket.fd, toIndex(1)); // the group is [a, b]
      const toB = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(port, `x${i}`)));
      assert.ok(toB.every((r) => r.startsWith("b:")), toB.join(" "));
      k.steer(b.socket.fd, toIndex(0)); // any socket of the group sets the group's program
      const toA = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(port, `y${i}`)));
      assert.ok(toA.every((r) => r.startsWith("a:")), toA.join(" "));

      // probes go to index 1 while clients keep going to index 0
      const before = b.received.length;
      const clients = Promise.all(Array.from({ length: 10 }, (_, i) => ask(port, `z${i}`)));
      const warmed = await warmResolver(
        k,
        at,
        a.socket.fd,
        ["one.test", "two.test", ""],
        Date.now() + 10_000,
      );
      assert.deepEqual(warmed, { answered: 3, unanswered: 0 });
      assert.ok((await clients).every((r) => r.startsWith("a:")));
      const hellos = b.received.slice(before);
      assert.equal(hellos.length, 3);
      assert.ok(hellos.every((h) => h.charCodeAt(0) === 0x16), "TLS handshake records");
      assert.equal(hellos.filter((h) => h.includes("one.test")).length, 1);
      assert.equal(hellos.filter((h) => h.includes("two.test")).length, 1);
      // a program that matches no one: everything to index 0
      k.steer(a.socket.fd, bySourcePort([1], 1, 0));
      assert.equal(await ask(port, "w"), "a:w");
      k.unsteer(a.socket.fd);
    } finally {
      a.listener.close();
      b.listener.close();
      await Promise.all([a.loop, b.loop]);
    }
  },
});

Deno.test({
  name:
    "handover: a handshake under way on the old socket keeps it open until it completes, and is served there; closing would have reset it",
  ignore: !linux,
  async fn() {
    const k = kernel();
    const port = freePort();
    const at = { family: 4, address: "127.0.0.1", port } as const;
    const ours = new Map<number, number>();
    const a = tagged(port, "old", ours);
    let b: ReturnType<typeof tagged> | undefined;
    const open: Deno.Conn[] = [];
    try {
      deferAccept(a.socket.fd);
      // connected for the client, a request (SYN_RECV) for the server until data comes
      const late = await Deno.connect({ hostname: "127.0.0.1", port });
      open.push(late);
      assert.equal(k.halfOpen(port).size, 1);
      assert.equal(k.listeners(at)[0].queued, 0);

      assert.equal(pin(k, a.socket), undefined);
      b = tagged(port, "new", ours);
      const h = await beginHandover(k, at, a.socket, b.socket as OwnSocket, []);
      assert.ok(typeof h !== "string", String(h));
      assert.equal(await ask(port, "fresh"), "new:fresh", "new connections go to the new socket");

      const drained = h.drained(() => false);
      const first = await Promise.race([drained.then(() => "drained"), sleep(300).then(() => "")]);
      assert.equal(first, "", "the old socket waits for the handshake under way");
      await late.write(enc.encode("late"));
      assert.deepEqual(await drained, { unfinished: 0 });
      a.listener.close();
      await h.finish(() => true);
      const buf = new Uint8Array(64);
      const n = await late.read(buf);
      assert.equal(dec.decode(buf.subarray(0, n ?? 0)), "old:late", "served by the old socket");
      assert.deepEqual(k.listeners(at).map((s) => s.inode), [b.socket.inode]);
      assert.equal(await ask(port, "after"), "new:after");

      // what the wait avoids: a socket closed with a handshake under way resets it
      deferAccept(b.socket.fd);
      const cut = await Deno.connect({ hostname: "127.0.0.1", port });
      open.push(cut);
      assert.equal(k.halfOpen(port).size, 1);
      b.listener.close();
      await b.loop;
      await cut.write(enc.encode("cut")).catch(() => {});
      await assert.rejects(() => cut.read(new Uint8Array(64)), Deno.errors.ConnectionReset);
    } finally {
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      for (const l of [a, b]) {
        try {
          l?.listener.close();
        } catch { /* closed */ }
      }
      await Promise.all([a.loop, b?.loop]);
    }
  },
});

async function leaf(caKey: Awaited<ReturnType<typeof generateKey>>, caPem: string) {
  const k = await generateKey();
  return {
    certificate: (await makeLeaf(["127.0.0.1"], k.keys.publicKey, caPem, caKey)).pem,
    key: k.pem,
  };
}

Deno.test({
  name:
    "handover unavailable (no ffi permission): said once in the log, each new certificate still served",
  ignore: !linux,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "gatehouse-handover-" });
    const caKey = await generateKey();
    const ca = await makeRoot("Handover Test Root", caKey);
    const pems = [await leaf(caKey, ca.pem), await leaf(caKey, ca.pem), await leaf(caKey, ca.pem)];
    const port = freePort();
    const admin = freePort();
    const log = `${dir}/server.log`;
    const config = (pem: { certificate: string; key: string }) => ({
      admin: { listen: `127.0.0.1:${admin}` },
      storage: { module: "file_system", root: `${dir}/storage` },
      logging: {
        logs: {
          default: {
            writer: { output: "file", filename: log },
            encoder: { format: "json" },
            level: "WARN",
          },
        },
      },
      apps: {
        tls: { certificates: { load_pem: [pem] } },
        http: {
          servers: {
            srv0: {
              listen: [`127.0.0.1:${port}`],
              automatic_https: { disable: true },
              tls_connection_policies: [{}],
              routes: [{ handle: [{ handler: "static_response", body: "hi" }] }],
            },
          },
        },
      },
    });
    await Deno.writeTextFile(`${dir}/config.json`, JSON.stringify(config(pems[0])));
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--deny-ffi",
        "--config",
        DENO_JSON,
        CLI,
        "run",
        "--config",
        `${dir}/config.json`,
      ],
      env: { XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
      stdout: "null",
      stderr: "null",
    }).spawn();
    const serial = async (pem: string) => {
      const p = new Deno.Command("openssl", {
        args: ["x509", "-noout", "-serial"],
        stdin: "piped",
        stdout: "piped",
      }).spawn();
      const w = p.stdin.getWriter();
      await w.write(enc.encode(pem));
      await w.close();
      return /serial=([0-9A-F]+)/.exec(dec.decode((await p.output()).stdout))?.[1];
    };
    const serves = async (pem: string) => {
      const want = await serial(pem);
      for (let i = 0; i < 200; i++) {
        if ((await servedCert(port, "127.0.0.1").catch(() => null))?.serial === want) return;
        await sleep(100);
      }
      throw new Error("the certificate was not served");
    };
    try {
      await serves(pems[0].certificate);
      for (const pem of [pems[1], pems[2]]) {
        const r = await fetch(`http://127.0.0.1:${admin}/load`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(config(pem)),
        });
        assert.equal(r.status, 200, await r.text());
        await serves(pem.certificate);
      }
      const msgs = (await Deno.readTextFile(log)).split("\n").filter((l) => l.startsWith("{"))
        .map((l) => String(JSON.parse(l).msg));
      assert.equal(msgs.filter((m) => m.startsWith("certificates changed")).length, 2);
      const said = msgs.filter((m) => m.startsWith("TLS listener handover unavailable"));
      assert.equal(said.length, 1, msgs.join("\n"));
      assert.match(said[0], /\(the ffi permission is not granted\)/);
    } finally {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true });
    }
  },
});
