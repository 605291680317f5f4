/**
 * The HTTP/3 listener (`lib/server/listeners/h3/`) on a real QUIC endpoint, spoken to by the
 * HTTP/3 client of the same folder and by raw QUIC connections: requests as web `Request`s
 * (method, URL from :scheme/:authority/:path, fields, cookies joined, bodies streamed both
 * ways), the answers HTTP/3 demands (content-length, HEAD, 204), the malformed requests it
 * answers 400/431/501, the connection errors of RFC 9114 §8 and RFC 9204 §6 (closed with the
 * right code), a peer's QPACK dynamic table (blocked streams, acknowledgments), the stream
 * limit, graceful shutdown with GOAWAY and a certificate change on a live endpoint.
 */
import assert from "node:assert/strict";
import type { ServeInfo } from "../../../../lib/server/module/listener.ts";
import { H3 } from "../../../../lib/server/listeners/h3/errors.ts";
import {
  encodeFrame,
  encodeIdFrame,
  FRAME,
  reservedFrameType,
  STREAM_TYPE,
} from "../../../../lib/server/listeners/h3/frames.ts";
import { encodeFieldSection } from "../../../../lib/server/listeners/h3/qpack/encoder.ts";
import { H3ClientConnection } from "../../../../lib/server/listeners/h3/client.ts";
import {
  closeCode,
  concat,
  connect,
  controlStream,
  raw,
  serverStream,
  startH3,
  testPki,
  text,
  uni,
} from "./_h3.ts";

const enc = new TextEncoder();

function echo(req: Request, info: ServeInfo): Response {
  return Response.json({
    method: req.method,
    url: req.url,
    headers: [...req.headers],
    proto: info.tls?.proto,
    http3: info.http3,
    serverName: info.tls?.serverName,
    remote: info.remoteAddr,
  });
}

/** A request stream's bytes: HEADERS of `fields` (and `extra` frames after it). */
function requestBytes(fields: string[], ...extra: Uint8Array[]): Uint8Array {
  return concat(encodeFrame(FRAME.HEADERS, encodeFieldSection(fields, 0)), ...extra);
}

const GET = [":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", "/"];

/** Sends `bytes` on a new request stream of a raw connection; the answer's status, or null. */
async function rawRequest(conn: Deno.QuicConn, bytes: Uint8Array): Promise<number | null> {
  const bi = await conn.createBidirectionalStream();
  const w = bi.writable.getWriter();
  await w.write(bytes);
  await w.close();
  const c = new H3ClientConnectionReader(bi.readable);
  return await c.status();
}

/** Reads the :status of a raw stream's answer. */
class H3ClientConnectionReader {
  constructor(readonly s: ReadableStream<Uint8Array>) {}
  async status(): Promise<number | null> {
    const { StreamReader } = await import("../../../../lib/server/listeners/h3/stream_reader.ts");
    const { QpackDecoder } = await import("../../../../lib/server/listeners/h3/qpack/decoder.ts");
    const r = new StreamReader(this.s);
    try {
      if (!(await r.frameHeader()) || r.type !== FRAME.HEADERS) return null;
      const d = new QpackDecoder({
        maxTableCapacity: 0,
        maxBlockedStreams: 0,
        maxFieldSectionSize: 1 << 20,
      });
      const fields = d.decode(await r.payload(), 0) as string[];
      return Number(fields[1]);
    } catch {
      return null;
    }
  }
}

Deno.test("h3 listener: a GET becomes a web Request with the connection's facts", async () => {
  const h = await startH3(echo);
  const c = await connect(h);
  try {
    const res = await c.request({
      method: "GET",
      authority: `localhost:${h.port}`,
      path: "/a/b?c=d",
      headers: [["cookie", "a=1"], ["x-one", "1"], ["cookie", "b=2"], ["user-agent", "t"]],
    });
    assert.equal(res.status, 200);
    const got = JSON.parse(await text(res.body));
    assert.equal(got.method, "GET");
    assert.equal(got.url, `https://localhost:${h.port}/a/b?c=d`);
    assert.equal(got.proto, "h3");
    assert.equal(got.http3, true);
    assert.equal(got.serverName, "localhost");
    assert.equal(got.remote.transport, "udp");
    assert.equal(got.remote.hostname, "127.0.0.1");
    const headers = new Map(got.headers as [string, string][]);
    assert.equal(headers.get("cookie"), "a=1; b=2");
    assert.equal(headers.get("x-one"), "1");
    assert.equal(headers.has("host"), false);
    const fields = new Map(res.headers);
    assert.equal(fields.get("content-type"), "application/json");
    assert.ok(fields.get("content-length"));
    assert.ok(fields.get("date"));
    assert.equal((await c.settings).qpackMaxTableCapacity, 4096);
    assert.equal((await c.settings).maxFieldSectionSize, 1 << 20);
  } finally {
    c.close();
    await h.close();
  }
});

Deno.test("h3 listener: request and response bodies stream both ways", async () => {
  const h = await startH3(async (req) => {
    if (req.method === "POST") {
      const digest = await crypto.subtle.digest("SHA-256", await req.arrayBuffer());
      return new Response(btoa(String.fromCharCode(...new Uint8Array(digest))));
    }
    // a body in several pieces, the last one a while later
    let n = 0;
    return new Response(
      new ReadableStream({
        async pull(ctl) {
          if (n++ < 5) ctl.enqueue(new Uint8Array(100_000).fill(n));
          else {
            await new Promise((r) => setTimeout(r, 20));
            ctl.close();
          }
        },
      }),
    );
  });
  const c = await connect(h);
  try {
    const body = crypto.getRandomValues(new Uint8Array(65536));
    const big = new Uint8Array(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 65536) big.set(body, i);
    let sent = 0;
    const upload = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent >= big.length) return ctl.close();
        ctl.enqueue(big.subarray(sent, sent + 100_000));
        sent += 100_000;
      },
    });
    const res = await c.request({
      method: "POST",
      authority: "localhost",
      path: "/up",
      body: upload,
    });
    const want = btoa(
      String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-256", big))),
    );
    assert.equal(await text(res.body), want);

    const down = await c.request({ method: "GET", authority: "localhost", path: "/down" });
    assert.equal(new Map(down.headers).get("content-length"), undefined);
    const bytes = new Uint8Array(await new Response(down.body).arrayBuffer());
    assert.equal(bytes.length, 500_000);
    assert.equal(bytes[0], 1);
    assert.equal(bytes[499_999], 5);
  } finally {
    c.close();
    await h.close();
  }
});

Deno.test("h3 listener: HEAD and 204 answers carry no body; HEAD keeps the length", async () => {
  const h = await startH3((req) =>
    new URL(req.url).pathname === "/none"
      ? new Response(null, { status: 204 })
      : new Response("twelve bytes")
  );
  const c = await connect(h);
  try {
    const head = await c.request({ method: "HEAD", authority: "localhost", path: "/" });
    assert.equal(head.status, 200);
    assert.equal(new Map(head.headers).get("content-length"), "12");
    assert.equal(await text(head.body), "");
    const none = await c.request({ method: "GET", authority: "localhost", path: "/none" });
    assert.equal(none.status, 204);
    assert.equal(await text(none.body), "");
  } finally {
    c.close();
    await h.close();
  }
});

Deno.test("h3 listener: malformed requests are answered 400, CONNECT 501, large heads 431", async () => {
  let handled = 0;
  const h = await startH3(() => (handled++, new Response("ok")), { maxHeaderBytes: 4096 });
  const conn = await raw(h);
  try {
    await uni(conn, controlStream());
    const cases: [string, string[], number][] = [
      ["upper-case name", [...GET, "X-Up", "1"], 400],
      ["connection-specific field", [...GET, "connection", "keep-alive"], 400],
      ["te other than trailers", [...GET, "te", "gzip"], 400],
      ["no :path", [":method", "GET", ":scheme", "https", ":authority", "localhost"], 400],
      ["no authority", [":method", "GET", ":scheme", "https", ":path", "/"], 400],
      ["pseudo after regular", [
        ":method",
        "GET",
        ":scheme",
        "https",
        "x",
        "1",
        ":authority",
        "l",
        ":path",
        "/",
      ], 400],
      ["repeated :method", [...GET, ":method", "POST"], 400],
      ["unknown pseudo", [":foo", "1", ...GET], 400],
      ["authority and host differ", [...GET, "host", "other"], 400],
      [
        "bad authority",
        [":method", "GET", ":scheme", "https", ":authority", "a/b", ":path", "/"],
        400,
      ],
      ["CR in a value", [...GET, "x", "a\rb"], 400],
      ["bad scheme", [":method", "GET", ":scheme", "ftp", ":authority", "l", ":path", "/"], 400],
      ["CONNECT", [":method", "CONNECT", ":authority", "example.com:443"], 501],
      ["extended CONNECT", [
        ":method",
        "CONNECT",
        ":protocol",
        "websocket",
        ":scheme",
        "https",
        ":authority",
        "l",
        ":path",
        "/",
      ], 501],
      ["head too large", [...GET, "x-big", "y".repeat(5000)], 431],
    ];
    for (const [what, fields, status] of cases) {
      assert.equal(await rawRequest(conn, requestBytes(fields)), status, what);
    }
    assert.equal(handled, 0);
    // a well-formed one on the same connection still works
    assert.equal(await rawRequest(conn, requestBytes(GET)), 200);
    // content-length that the DATA does not match: the body fails for the handler
  } finally {
    conn.close();
    await h.close();
  }
});

Deno.test("h3 listener: a body that does not match content-length fails for the handler", async () => {
  let error = "";
  const h = await startH3(async (req) => {
    try {
      await req.arrayBuffer();
    } catch (e) {
      error = String(e);
    }
    return new Response("done");
  });
  const conn = await raw(h);
  try {
    await uni(conn, controlStream());
    const fields = [
      ":method",
      "POST",
      ":scheme",
      "https",
      ":authority",
      "localhost",
      ":path",
      "/",
      "content-length",
      "10",
    ];
    assert.equal(
      await rawRequest(conn, requestBytes(fields, encodeFrame(FRAME.DATA, enc.encode("short")))),
      200,
    );
    assert.match(error, /less body than content-length/);
  } finally {
    conn.close();
    await h.close();
  }
});

Deno.test("h3 listener: frames and streams of unknown types are ignored", async () => {
  const h = await startH3(() => new Response("fine"));
  const conn = await raw(h);
  try {
    // reserved frames on the control stream and on the request stream, a reserved stream type
    await uni(conn, controlStream(encodeFrame(reservedFrameType(7), enc.encode("grease"))));
    await uni(conn, Uint8Array.of(0x40, 0x21, 1, 2, 3)); // stream type 0x21 (reserved), two-byte varint
    const bytes = concat(
      encodeFrame(reservedFrameType(3), new Uint8Array(10)),
      requestBytes(GET, encodeFrame(reservedFrameType(100), new Uint8Array(3))),
    );
    assert.equal(await rawRequest(conn, bytes), 200);
  } finally {
    conn.close();
    await h.close();
  }
});

/** Opens a raw connection, runs `act`, and returns the code the server closed it with. */
async function closedWith(act: (conn: Deno.QuicConn) => Promise<void>): Promise<number> {
  const h = await startH3(() => new Response("x"));
  const conn = await raw(h);
  try {
    await act(conn).catch(() => {});
    return await closeCode(conn);
  } finally {
    await h.close();
  }
}

Deno.test("h3 listener: connection errors close the connection with RFC 9114's codes", async () => {
  const get = requestBytes(GET);
  const cases: [string, (c: Deno.QuicConn) => Promise<void>, number][] = [
    [
      "control stream without SETTINGS first",
      (c) => uni(c, concat(Uint8Array.of(0), encodeIdFrame(FRAME.GOAWAY, 0))),
      H3.MISSING_SETTINGS,
    ],
    [
      "a second SETTINGS",
      (c) => uni(c, controlStream(encodeFrame(FRAME.SETTINGS, new Uint8Array(0)))),
      H3.FRAME_UNEXPECTED,
    ],
    [
      "HTTP/2 PING on the control stream",
      (c) => uni(c, controlStream(encodeFrame(0x6, new Uint8Array(8)))),
      H3.FRAME_UNEXPECTED,
    ],
    [
      "DATA on the control stream",
      (c) => uni(c, controlStream(encodeFrame(FRAME.DATA, new Uint8Array(1)))),
      H3.FRAME_UNEXPECTED,
    ],
    [
      "an HTTP/2 setting",
      (c) => uni(c, concat(Uint8Array.of(0), encodeFrame(FRAME.SETTINGS, Uint8Array.of(0x2, 0x1)))),
      H3.SETTINGS_ERROR,
    ],
    [
      "a second control stream",
      async (c) => (await uni(c, controlStream()), await uni(c, controlStream())),
      H3.STREAM_CREATION_ERROR,
    ],
    [
      "a push stream from the client",
      (c) => uni(c, Uint8Array.of(STREAM_TYPE.PUSH, 0)),
      H3.STREAM_CREATION_ERROR,
    ],
    ["the control stream closed", (c) => uni(c, controlStream(), true), H3.CLOSED_CRITICAL_STREAM],
    [
      "CANCEL_PUSH never allowed",
      (c) => uni(c, controlStream(encodeIdFrame(FRAME.CANCEL_PUSH, 3))),
      H3.ID_ERROR,
    ],
    [
      "MAX_PUSH_ID going down",
      (c) =>
        uni(
          c,
          controlStream(
            concat(encodeIdFrame(FRAME.MAX_PUSH_ID, 5), encodeIdFrame(FRAME.MAX_PUSH_ID, 4)),
          ),
        ),
      H3.ID_ERROR,
    ],
    [
      "GOAWAY with two ids",
      (c) => uni(c, controlStream(encodeFrame(FRAME.GOAWAY, Uint8Array.of(1, 2)))),
      H3.FRAME_ERROR,
    ],
    [
      "DATA before HEADERS",
      async (c) => void (await rawRequest(c, encodeFrame(FRAME.DATA, enc.encode("x")))),
      H3.FRAME_UNEXPECTED,
    ],
    [
      "SETTINGS on a request stream",
      async (c) =>
        void (await rawRequest(c, concat(encodeFrame(FRAME.SETTINGS, new Uint8Array(0)), get))),
      H3.FRAME_UNEXPECTED,
    ],
    [
      "a request stream cut inside a frame",
      async (c) => void (await rawRequest(c, get.subarray(0, get.length - 1))),
      H3.FRAME_ERROR,
    ],
    [
      "a bad QPACK section",
      async (c) =>
        void (await rawRequest(c, encodeFrame(FRAME.HEADERS, Uint8Array.of(0, 0, 0xff, 0x24)))),
      H3.QPACK_DECOMPRESSION_FAILED,
    ],
    [
      "an insert above the table capacity",
      (c) => uni(c, Uint8Array.of(STREAM_TYPE.QPACK_ENCODER, 0x3f, 0xe2, 0x1f)),
      H3.QPACK_ENCODER_STREAM_ERROR,
    ],
    [
      "a Section Acknowledgment for nothing",
      (c) => uni(c, Uint8Array.of(STREAM_TYPE.QPACK_DECODER, 0x80)),
      H3.QPACK_DECODER_STREAM_ERROR,
    ],
    [
      "a second encoder stream",
      async (c) => (await uni(c, Uint8Array.of(2)), await uni(c, Uint8Array.of(2))),
      H3.STREAM_CREATION_ERROR,
    ],
  ];
  for (const [what, act, code] of cases) assert.equal(await closedWith(act), code, what);
});

Deno.test("h3 listener: a peer's dynamic table: blocked sections wait, then are acknowledged", async () => {
  const h = await startH3(echo);
  const conn = await raw(h);
  try {
    await uni(conn, controlStream());
    // the request names an entry the encoder stream has not inserted yet: it waits
    const section = Uint8Array.of(0x02, 0x00, 0x80, 0xd1, 0xd7, 0xc1); // RIC 1, base 1: dyn 0, then static
    const bi = await conn.createBidirectionalStream();
    const w = bi.writable.getWriter();
    await w.write(encodeFrame(FRAME.HEADERS, section));
    await w.close();
    const acks = serverStream(conn, STREAM_TYPE.QPACK_DECODER, (b) => b.includes(0x80));
    await new Promise((r) => setTimeout(r, 50));
    // Set Dynamic Table Capacity 220, Insert With Name Reference (static 0: :authority)
    const insert = concat(
      Uint8Array.of(STREAM_TYPE.QPACK_ENCODER, 0x3f, 0xbd, 0x01, 0xc0, 0x09),
      enc.encode("localhost"),
    );
    await uni(conn, insert);
    const status = await new H3ClientConnectionReader(bi.readable).status();
    assert.equal(status, 200);
    const bytes = await acks;
    // Section Acknowledgment of stream 0 (0x80), after at most an Insert Count Increment of 1
    assert.ok(
      (bytes[0] === 0x80) || (bytes[0] === 0x01 && bytes[1] === 0x80),
      [...bytes].map((b) => b.toString(16)).join(" "),
    );
  } finally {
    conn.close();
    await h.close();
  }
});

Deno.test("h3 listener: 100 request streams at once, as quic-go allows", async () => {
  const gate = Promise.withResolvers<void>();
  const h = await startH3(async () => (await gate.promise, new Response("x")));
  const conn = await raw(h);
  try {
    const open: Deno.QuicBidirectionalStream[] = [];
    for (let i = 0; i < 100; i++) open.push(await conn.createBidirectionalStream());
    await assert.rejects(conn.createBidirectionalStream(), /stream|limit|bidirectional/i);
  } finally {
    gate.resolve();
    conn.close();
    await h.close();
  }
});

Deno.test("h3 listener: shutdown sends GOAWAY, finishes the request in flight, refuses new ones", async () => {
  const gate = Promise.withResolvers<void>();
  const started = Promise.withResolvers<void>();
  const h = await startH3(async () => {
    started.resolve();
    await gate.promise;
    return new Response("late but whole");
  });
  const c = await connect(h);
  try {
    const pending = c.request({ method: "GET", authority: "localhost", path: "/" });
    await started.promise;
    await h.server.shutdown();
    // GOAWAY arrives: the first stream not served is the one after ours (0 + 4)
    for (let i = 0; i < 100 && c.goaway < 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(c.goaway, 4);
    await assert.rejects(
      H3ClientConnection.connect({
        hostname: "127.0.0.1",
        port: h.port,
        serverName: "localhost",
        caCerts: [h.ca],
        maxIdleTimeout: 1000,
      }),
    );
    gate.resolve();
    const res = await pending;
    assert.equal(await text(res.body), "late but whole");
    c.close();
    await h.server.finished;
  } finally {
    gate.resolve();
    c.close();
  }
});

Deno.test("h3 listener: a new certificate serves new connections; open ones keep theirs", async () => {
  const p = await testPki();
  const h = await startH3(() => new Response("ok"), {
    certs: { "a.test": p.leafs.a },
    names: ["a.test"],
  });
  try {
    assert.equal(h.server.serves("a.test:443"), true);
    assert.equal(h.server.serves("x.a.test"), true);
    assert.equal(h.server.serves("b.test"), false);
    const a = await connect(h, "a.test");
    h.setCertificate("a.test", p.leafs.b);
    for (let i = 0; i < 100 && h.server.certificate !== p.leafs.b.cert; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(h.server.serves("b.test"), true);
    assert.equal(h.server.serves("a.test"), false);
    const b = await connect(h, "b.test");
    assert.equal((await b.request({ method: "GET", authority: "b.test", path: "/" })).status, 200);
    assert.equal((await a.request({ method: "GET", authority: "a.test", path: "/" })).status, 200);
    await assert.rejects(connect(h, "a.test"));
    a.close();
    b.close();
  } finally {
    await h.close();
  }
});

Deno.test("h3 listener: of several certificates, the one covering most names is held", async () => {
  const p = await testPki();
  const h = await startH3(() => new Response("ok"), {
    certs: { "a.test": p.leafs.a, "x.a.test": p.leafs.a, "b.test": p.leafs.b },
    names: ["b.test", "a.test", "x.a.test"],
  });
  try {
    assert.equal(h.server.certificate, p.leafs.a.cert);
    assert.equal(h.server.serves("b.test"), false);
  } finally {
    await h.close();
  }
});
