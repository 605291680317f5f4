/**
 * `listener_engine: "node"`: the same handlers behind `node:http`, plus what `Deno.serve`
 * cannot do: relaying any `Upgrade` (h2c, custom protocols, WebSocket as raw bytes) through
 * `reverse_proxy`, with half-close and the access log's 101.
 */
import assert from "node:assert/strict";
import { serve, startHttp } from "./harness.ts";
import { raw } from "./raw.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A backend on a raw socket: answers an upgrade with 101, then upper-cases what it gets. */
function switchingBackend(opts: { refuse?: boolean } = {}) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const heads: string[] = [];
  const ended: boolean[] = [];
  const accepting = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(65536);
        let got = "";
        while (!got.includes("\r\n\r\n")) {
          const n = await conn.read(buf);
          if (n === null) return conn.close();
          got += dec.decode(buf.subarray(0, n));
        }
        const [head, early] = got.split("\r\n\r\n");
        heads.push(head);
        if (opts.refuse) {
          await conn.write(enc.encode(
            "HTTP/1.1 200 OK\r\ncontent-length: 9\r\ncontent-type: text/plain\r\n\r\nno switch",
          ));
          return;
        }
        await conn.write(enc.encode(
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\n" +
            "X-Up: 1\r\n\r\nwelcome ",
        ));
        if (early) await conn.write(enc.encode(early.toUpperCase()));
        while (true) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
          await conn.write(enc.encode(dec.decode(buf.subarray(0, n)).toUpperCase()));
        }
        ended.push(true);
        // After the client's half close, one last message, then close.
        await conn.write(enc.encode(" bye")).catch(() => {});
        conn.close();
      })().catch(() => {});
    }
  })();
  return {
    dial: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    heads,
    ended,
    async close() {
      listener.close();
      await accepting.catch(() => {});
    },
  };
}

/** Reads from a connection until `pred` holds for everything read so far (or EOF). */
async function readUntil(conn: Deno.Conn, pred: (s: string) => boolean): Promise<string> {
  const buf = new Uint8Array(65536);
  let s = "";
  while (!pred(s)) {
    const n = await conn.read(buf);
    if (n === null) break;
    s += dec.decode(buf.subarray(0, n));
  }
  return s;
}

function proxyTo(dial: string) {
  return [{ handle: [{ handler: "reverse_proxy", upstreams: [{ dial }] }] }];
}

Deno.test("node engine: handlers answer as on Deno.serve (headers, bodies both ways, HEAD, 404, cookies)", async () => {
  const echo = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const body = new Uint8Array(await req.arrayBuffer());
    return new Response(
      // A streamed, multi-chunk answer of the request body's length and checksum.
      new ReadableStream({
        start(c) {
          c.enqueue(enc.encode(`len=${body.length} `));
          c.enqueue(enc.encode(`sum=${body.reduce((a, b) => (a + b) % 65521, 0)}`));
          c.close();
        },
      }),
      { headers: { "x-method": req.method } },
    );
  });
  const dial = `127.0.0.1:${(echo.addr as Deno.NetAddr).port}`;
  const srv = await serve([
    {
      match: [{ path: ["/hello"] }],
      handle: [{
        handler: "static_response",
        body: "Hello, {http.request.uri.query.who}!",
        headers: { "Set-Cookie": ["a=1", "b=2"], "X-Tls": ["{http.request.tls.version}"] },
      }],
      terminal: true,
    },
    {
      match: [{ path: ["/echo"] }],
      handle: [{ handler: "reverse_proxy", upstreams: [{ dial }] }],
      terminal: true,
    },
  ], { listener_engine: "node", logs: {} });
  try {
    const r = await fetch(`${srv.url()}/hello?who=node`);
    assert.equal(r.status, 200);
    assert.equal(await r.text(), "Hello, node!");
    assert.equal(r.headers.get("content-length"), "12");
    assert.equal(r.headers.get("server"), "Gatehouse");
    assert.deepEqual(r.headers.getSetCookie(), ["a=1", "b=2"]);
    assert.equal(r.headers.get("x-tls"), "", "the TLS placeholders are empty on plain HTTP");

    const head = await fetch(`${srv.url()}/hello`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");

    const miss = await fetch(`${srv.url()}/nothing`);
    assert.equal(miss.status, 200, "an empty route chain answers 200 with no body, as Caddy");
    assert.equal(await miss.text(), "");

    const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7) % 256);
    const sum = big.reduce((a, b) => (a + b) % 65521, 0);
    const p = await fetch(`${srv.url()}/echo`, { method: "POST", body: big });
    assert.equal(p.status, 200);
    assert.equal(p.headers.get("x-method"), "POST");
    assert.equal(await p.text(), `len=${big.length} sum=${sum}`);

    const rec = await srv.waitLog((l) =>
      l.msg === "handled request" && (l.request as { uri: string }).uri === "/echo"
    );
    assert.equal(rec.status, 200);
    assert.equal(rec.bytes_read, big.length);
    assert.equal((rec.request as { proto: string }).proto, "HTTP/1.1");
  } finally {
    await srv.stop();
    await echo.shutdown();
  }
});

Deno.test("node engine: reverse_proxy relays a non-WebSocket upgrade both ways, with half close", async () => {
  const b = switchingBackend();
  const srv = await serve(proxyTo(b.dial), { listener_engine: "node", logs: {} });
  try {
    const u = new URL(srv.url());
    const conn = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
    // Bytes of the new protocol may follow the request head at once.
    await conn.write(enc.encode(
      `GET /tunnel HTTP/1.1\r\nHost: ${u.host}\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\nearly `,
    ));
    const first = await readUntil(conn, (s) => s.includes("EARLY "));
    const [head, rest] = first.split("\r\n\r\n");
    assert.match(head, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    assert.match(head.toLowerCase(), /\r\nupgrade: shout/);
    assert.match(head.toLowerCase(), /\r\nconnection: upgrade/);
    assert.match(head.toLowerCase(), /\r\nx-up: 1/);
    assert.equal(rest, "welcome EARLY ");
    await conn.write(enc.encode("hello tunnel"));
    assert.equal(await readUntil(conn, (s) => s.includes("TUNNEL")), "HELLO TUNNEL");
    // Half close: the upstream sees the end and can still answer.
    await conn.closeWrite();
    assert.equal(await readUntil(conn, () => false), " bye");
    conn.close();

    assert.equal(b.heads.length, 1);
    const up = b.heads[0].toLowerCase();
    assert.match(up, /^get \/tunnel http\/1\.1\r\n/);
    assert.match(up, /\r\nconnection: upgrade/);
    assert.match(up, /\r\nupgrade: shout/);
    assert.match(up, /\r\nx-forwarded-for: 127\.0\.0\.1/);
    assert.deepEqual(b.ended, [true]);

    const rec = await srv.waitLog((l) =>
      l.msg === "handled request" && (l.request as { uri: string }).uri === "/tunnel"
    );
    assert.equal(rec.status, 101);
    assert.deepEqual((rec.resp_headers as Record<string, string[]>).Upgrade, ["shout"]);
    const list = await (await srv.admin("/reverse_proxy/upstreams")).json() as {
      address: string;
      num_requests: number;
    }[];
    assert.equal(list.find((x) => x.address === b.dial)?.num_requests, 0);
  } finally {
    await srv.stop();
    await b.close();
  }
});

Deno.test("node engine: an upgrade nobody takes is answered in HTTP/1.1 and the connection closed", async () => {
  const refusing = switchingBackend({ refuse: true });
  const srv = await serve([
    {
      match: [{ path: ["/plain"] }],
      handle: [{ handler: "static_response", body: "not switching", status_code: 426 }],
      terminal: true,
    },
    ...proxyTo(refusing.dial),
  ], { listener_engine: "node" });
  try {
    const r = await raw(srv.url(), "GET", "/plain", { connection: "Upgrade", upgrade: "shout" });
    assert.equal(r.status, 426);
    assert.equal(r.text, "not switching");
    assert.equal(r.headers.get("connection"), "close");
    // The upstream declines the switch: its answer is relayed as is.
    const p = await raw(srv.url(), "GET", "/p", { connection: "Upgrade", upgrade: "shout" });
    assert.equal(p.status, 200);
    assert.equal(p.text, "no switch");
    assert.match(refusing.heads[0].toLowerCase(), /\r\nupgrade: shout/);
  } finally {
    await srv.stop();
    await refusing.close();
  }
});

Deno.test("node engine: WebSocket proxying goes through the raw relay", async () => {
  const backend = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req, { protocol: "chat" });
    socket.onmessage = (e) => socket.send(`echo:${e.data}`);
    return response;
  });
  const dial = `127.0.0.1:${(backend.addr as Deno.NetAddr).port}`;
  const srv = await serve(proxyTo(dial), { listener_engine: "node" });
  try {
    const ws = new WebSocket(srv.url().replace("http", "ws") + "/socket", ["chat"]);
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => {
        ws.send("one");
        ws.send("x".repeat(100_000));
      };
      ws.onmessage = (e) => {
        got.push(String(e.data));
        if (got.length === 2) ws.close(4001, "done");
      };
      ws.onclose = () => resolve();
      ws.onerror = () => reject(new Error("websocket error"));
    });
    assert.equal(ws.protocol, "chat");
    assert.deepEqual(got, ["echo:one", `echo:${"x".repeat(100_000)}`]);
  } finally {
    await srv.stop();
    await backend.shutdown();
  }
});

Deno.test("node engine: an unknown listener_engine fails the load; a reload keeps the node listener", async () => {
  await assert.rejects(
    () => serve([], { listener_engine: "uring" }),
    /listener_engine: must be "deno" or "node", got "uring"/,
  );
  const srv = await startHttp({
    servers: {
      a: {
        listen: ["127.0.0.1:0"],
        listener_engine: "node",
        routes: [{ handle: [{ handler: "static_response", body: "v1" }] }],
      },
    },
  });
  try {
    const keep = Deno.connect({ hostname: "127.0.0.1", port: srv.ports("a")[0] });
    assert.equal(await (await fetch(srv.url("a"))).text(), "v1");
    await srv.reload({
      servers: {
        a: {
          listen: ["127.0.0.1:0"],
          listener_engine: "node",
          routes: [{ handle: [{ handler: "static_response", body: "v2" }] }],
        },
      },
    });
    assert.equal(await (await fetch(srv.url("a"))).text(), "v2");
    (await keep).close();
  } finally {
    await srv.stop();
  }
});

Deno.test("node engine: a reload switches an address's engine on the same port (both bind it with SO_REUSEPORT until the old one is let go)", async () => {
  const srv = await startHttp({
    servers: {
      a: {
        listen: ["127.0.0.1:0"],
        routes: [{ handle: [{ handler: "static_response", body: "deno" }] }],
      },
    },
  });
  try {
    const before = srv.url("a");
    assert.equal(await (await fetch(before)).text(), "deno");
    await srv.reload({
      servers: {
        a: {
          listen: ["127.0.0.1:0"],
          listener_engine: "node",
          routes: [{ handle: [{ handler: "static_response", body: "node" }] }],
        },
      },
    });
    assert.equal(srv.url("a"), before, "the same port");
    assert.equal(await (await fetch(srv.url("a"))).text(), "node");
  } finally {
    await srv.stop();
  }
});
