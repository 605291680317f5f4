/**
 * Two `http` transport fields of the HTTP/1.1 client against scripted upstreams on loopback
 * (raw TCP, so what arrives and when is seen byte for byte):
 *
 * - `expect_continue_timeout`: a request with `Expect: 100-continue` sends its head and holds
 *   its body until the upstream's `100 Continue` (or the time is up); a final answer first
 *   means no body when the upstream closes the connection, else the body still goes (Go).
 * - `write_buffer_size`: the request gathers in the buffer (the head with a short body goes in
 *   one write when the body ends); a chunked body goes out chunk by chunk.
 */
import assert from "node:assert/strict";
import { startHttp } from "../http/harness.ts";
import { exchange } from "./_h2.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What the scripted upstream saw of one request. */
interface Seen {
  path: string;
  order: string[];
  /** Body bytes received after the head (until the connection ended). */
  received: number;
  /** The first read of the connection, as text. */
  first: string;
}

/** A raw HTTP/1.1 upstream: one request per connection, scripted by path. */
function scripted() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: Seen[] = [];
  const serve = async (conn: Deno.Conn) => {
    const buf = new Uint8Array(64 * 1024);
    let text = "";
    let first = "";
    const s: Seen = { path: "", order: [], received: 0, first: "" };
    const read = async () => {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return false;
      const t = dec.decode(buf.subarray(0, n));
      if (!first) s.first = first = t;
      text += t;
      return true;
    };
    try {
      while (!text.includes("\r\n\r\n")) if (!(await read())) return;
      const end = text.indexOf("\r\n\r\n") + 4;
      const head = text.slice(0, end).toLowerCase();
      s.path = head.split(" ")[1];
      seen.push(s);
      s.order.push("head");
      const length = Number(/\r\ncontent-length: (\d+)/.exec(head)?.[1] ?? -1);
      const chunked = head.includes("transfer-encoding: chunked");
      const bodyDone = () => {
        const body = text.slice(end);
        s.received = enc.encode(body).length;
        return chunked ? body.endsWith("0\r\n\r\n") : s.received >= length;
      };
      const answer = (status: string, extra = "") => {
        const body = JSON.stringify(s);
        return conn.write(enc.encode(
          `HTTP/1.1 ${status}\r\nx-order: ${s.order.join(",")}\r\n${extra}` +
            `content-length: ${enc.encode(body).length}\r\n\r\n${body}`,
        ));
      };
      if (s.path === "/reject" || s.path === "/reject-keep") {
        const close = s.path === "/reject";
        await conn.write(enc.encode(
          `HTTP/1.1 417 Expectation Failed\r\ncontent-length: 4\r\n` +
            `${close ? "connection: close\r\n" : ""}\r\nnope`,
        ));
        // whatever comes now is the body the proxy sent after the answer
        while (!bodyDone() && (await read()));
        bodyDone();
        return;
      }
      if (s.path === "/continue") {
        setTimeout(() => {
          s.order.push("100");
          conn.write(enc.encode("HTTP/1.1 100 Continue\r\n\r\n")).catch(() => {});
        }, 300);
      }
      if (text.length > end) s.order.push("data");
      while (!bodyDone()) {
        if (!(await read())) return;
        if (!s.order.includes("data")) s.order.push("data");
      }
      await answer("200 OK");
    } finally {
      try {
        conn.close();
      } catch { /* closed */ }
    }
  };
  (async () => {
    for await (const c of listener) serve(c);
  })().catch(() => {});
  return {
    dial: `127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    seen,
    close: () => listener.close(),
  };
}

const proxy = (dial: string, transport: Record<string, unknown>) => ({
  handle: [{
    handler: "reverse_proxy",
    upstreams: [{ dial }],
    transport: { protocol: "http", ...transport },
  }],
});

Deno.test("HTTP/1.1 transport: expect_continue_timeout holds the body for 100 Continue", async () => {
  const up = scripted();
  const srv = await startHttp({
    servers: {
      wait: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(up.dial, { expect_continue_timeout: "60s" })],
      },
      nowait: { listen: ["127.0.0.1:0"], routes: [proxy(up.dial, {})] },
      short: {
        listen: ["127.0.0.1:0"],
        routes: [proxy(up.dial, { expect_continue_timeout: "200ms" })],
      },
    },
  });
  const post = (server: string, path: string) =>
    exchange(srv.url(server), "POST", path, { expect: "100-continue" }, "hello");
  try {
    const waited = await post("wait", "/continue");
    assert.equal(waited.status, 200);
    assert.equal(waited.headers.get("x-order"), "head,100,data", "the body after 100 Continue");
    assert.equal(JSON.parse(waited.body).received, 5);
    const at = await post("nowait", "/continue");
    assert.equal(at.headers.get("x-order"), "head,data", "without the field, at once");
    // no 100 Continue: the body goes when the time is up
    const late = await post("short", "/plain");
    assert.equal(late.status, 200);
    assert.equal(JSON.parse(late.body).received, 5);

    // a final answer that closes the connection: the body is never sent
    const no = await post("wait", "/reject");
    assert.equal(no.status, 417);
    assert.equal(no.body, "nope");
    const rejected = up.seen.findLast((s) => s.path === "/reject")!;
    assert.equal(rejected.received, 0);
    // one that keeps it open: the body goes anyway, so the connection stays in step (Go)
    const kept = await post("wait", "/reject-keep");
    assert.equal(kept.status, 417);
    const keptSeen = up.seen.findLast((s) => s.path === "/reject-keep")!;
    const end = Date.now() + 10_000;
    while (keptSeen.received < 5 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.equal(keptSeen.received, 5);
  } finally {
    await srv.stop();
    up.close();
  }
});

/** Sends a request in two parts, the second after the first has had time to go upstream. */
async function twoParts(url: string, head: string, first: string, second: string) {
  const u = new URL(url);
  const c = await Deno.connect({ hostname: u.hostname, port: Number(u.port) });
  try {
    await c.write(enc.encode(head + first));
    await new Promise((r) => setTimeout(r, 300));
    await c.write(enc.encode(second));
    let out = "";
    const buf = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await c.read(buf);
      if (n === null) break;
      out += dec.decode(buf.subarray(0, n));
    }
    return JSON.parse(out.slice(out.indexOf("\r\n\r\n") + 4)) as Seen;
  } finally {
    try {
      c.close();
    } catch { /* closed */ }
  }
}

Deno.test("HTTP/1.1 transport: write_buffer_size gathers the request, chunk by chunk when chunked", async () => {
  const up = scripted();
  const srv = await startHttp({
    servers: {
      buffered: { listen: ["127.0.0.1:0"], routes: [proxy(up.dial, { write_buffer_size: 4096 })] },
      plain: { listen: ["127.0.0.1:0"], routes: [proxy(up.dial, {})] },
    },
  });
  const fixed = (url: string) =>
    twoParts(
      url,
      "POST /fixed HTTP/1.1\r\nhost: a\r\nconnection: close\r\ncontent-length: 10\r\n\r\n",
      "hello",
      "world",
    );
  const chunked = (url: string) =>
    twoParts(
      url,
      "POST /chunked HTTP/1.1\r\nhost: a\r\nconnection: close\r\ntransfer-encoding: chunked\r\n\r\n",
      "5\r\nhello\r\n",
      "5\r\nworld\r\n0\r\n\r\n",
    );
  try {
    // buffered: head and the whole short body reach the upstream in one piece
    const b = await fixed(srv.url("buffered"));
    assert.match(b.first, /^POST \/fixed HTTP\/1\.1\r\n[^]*\r\n\r\nhelloworld$/);
    // unbuffered: the head (and the first part) go before the second part is even sent
    const p = await fixed(srv.url("plain"));
    assert.doesNotMatch(p.first, /world/);
    assert.equal(p.received, 10);
    // a chunked body is sent chunk by chunk even through the buffer (Go flushes each chunk)
    const c = await chunked(srv.url("buffered"));
    assert.match(c.first, /hello/);
    assert.doesNotMatch(c.first, /world/);
  } finally {
    await srv.stop();
    up.close();
  }
});
